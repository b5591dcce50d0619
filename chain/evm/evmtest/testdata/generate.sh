#!/bin/sh
# Regenerates Token.bin and Token.abi from Token.sol with the solc npm
# package (solc-js), pinned so that the committed bytecode is reproducible.
# Run from this directory: ./generate.sh
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$out"
npx -y solc@0.8.37 --optimize --bin --abi -o "$out" "$dir/Token.sol"
# solcjs names its outputs after the source path; keep only the contract.
cp "$out"/*Token_sol_Token.bin "$dir/Token.bin"
cp "$out"/*Token_sol_Token.abi "$dir/Token.abi"
