// Package hd holds payd's hierarchical deterministic keys and deposit
// addresses: the public account keys a business attaches as its wallet,
// the fresh receive address derived from them for each checkout, the
// address and transaction-hash formats of every network, and the making of
// a new wallet from a BIP39 recovery phrase.
//
// payd never holds a business's private keys (DESIGN 1.3). ParseAccountKey
// refuses anything private; WalletFromMnemonic, which runs on the
// operator's side for `payd business create --wallet generate`, wipes the
// seed and every private key it derives and returns public keys only.
//
// Paths and formats per network (docs/wallet-keys.md has the reasons):
//
//	bitcoin          BIP84  m/84'/0'/0'   zpub (or xpub)  → bc1q… P2WPKH at …/0/i
//	ethereum/polygon BIP44  m/44'/60'/0'  xpub            → EIP-55 0x… at …/0/i
//	tron             BIP44  m/44'/195'/0' xpub            → base58check T… at …/0/i
//	solana           SLIP-0010 m/44'/501'/0'/0' public key → the one address;
//	                 each checkout gets a Solana Pay reference (NewReference)
//
// Every input this package refuses comes back as an *Error whose Reason
// says why and whose message names the network and the kind of input,
// ready for an invalid_request that names the field.
package hd
