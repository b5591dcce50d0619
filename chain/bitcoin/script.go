package bitcoin

import (
	"strings"

	"github.com/btcsuite/btcd/address/v2/base58"
	"github.com/btcsuite/btcd/address/v2/bech32"
)

// Opcodes of the standard output scripts.
const (
	op0           = 0x00
	op1           = 0x51 // OP_1; OP_n is op1+n-1
	opDup         = 0x76
	opHash160     = 0xa9
	opEqual       = 0x87
	opEqualVerify = 0x88
	opCheckSig    = 0xac
)

// Base58 version bytes of legacy addresses (Bitcoin Core chainparams);
// testnet, signet and regtest share the test ones.
const (
	p2pkhMain = 0x00
	p2shMain  = 0x05
	p2pkhTest = 0x6f
	p2shTest  = 0xc4
)

// addressScript returns the output script (scriptPubKey) an address pays
// to: a segwit program (P2WPKH, P2WSH, P2TR), P2PKH or P2SH. It decodes
// without judging the chain or the checksum variant, so callers pass only
// addresses ValidAddress accepted. false for anything else.
func addressScript(addr string) ([]byte, bool) {
	if _, data, _, err := bech32.DecodeGeneric(addr); err == nil && len(data) > 0 && data[0] <= 16 {
		program, err := bech32.ConvertBits(data[1:], 5, 8, false)
		if err != nil || len(program) < 2 || len(program) > 40 {
			return nil, false
		}
		version := byte(op0)
		if data[0] > 0 {
			version = op1 + data[0] - 1
		}
		return append([]byte{version, byte(len(program))}, program...), true
	}
	payload, v, err := base58.CheckDecode(addr)
	if err != nil || len(payload) != 20 {
		return nil, false
	}
	switch v {
	case p2pkhMain, p2pkhTest:
		return append(append([]byte{opDup, opHash160, 20}, payload...), opEqualVerify, opCheckSig), true
	case p2shMain, p2shTest:
		return append(append([]byte{opHash160, 20}, payload...), opEqual), true
	}
	return nil, false
}

// scriptAddress is addressScript's inverse: the address of an output
// script on the chain with bech32 prefix hrp (main when hrp is "bc"), in
// the spelling hd derives (lower-case bech32, bech32m from version 1). It
// is run only on outputs that matched a watched script, never per output
// of a block. false for a script that has no address.
func scriptAddress(script []byte, hrp string) (string, bool) {
	n := len(script)
	switch {
	case n >= 4 && n <= 42 && (script[0] == op0 || (script[0] >= op1 && script[0] <= op1+15)) && int(script[1]) == n-2:
		version := byte(0)
		if script[0] != op0 {
			version = script[0] - op1 + 1
		}
		data, err := bech32.ConvertBits(script[2:], 8, 5, true)
		if err != nil {
			return "", false
		}
		data = append([]byte{version}, data...)
		var s string
		if version == 0 {
			s, err = bech32.Encode(hrp, data)
		} else {
			s, err = bech32.EncodeM(hrp, data)
		}
		return strings.ToLower(s), err == nil
	case n == 25 && script[0] == opDup && script[1] == opHash160 && script[2] == 20 && script[23] == opEqualVerify && script[24] == opCheckSig:
		return base58.CheckEncode(script[3:23], legacyVersion(p2pkhMain, p2pkhTest, hrp)), true
	case n == 23 && script[0] == opHash160 && script[1] == 20 && script[22] == opEqual:
		return base58.CheckEncode(script[2:22], legacyVersion(p2shMain, p2shTest, hrp)), true
	}
	return "", false
}

// legacyVersion picks a base58 version byte for the chain of hrp.
func legacyVersion(main, test byte, hrp string) byte {
	if hrp == "bc" {
		return main
	}
	return test
}
