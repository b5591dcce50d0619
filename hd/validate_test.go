package hd

import (
	"strings"
	"testing"

	"payd/money"
)

// Transaction ids as nodes and explorers print them.
const (
	// The bitcoin genesis block's coinbase txid (btcd chaincfg genesis.go,
	// genesisMerkleRoot).
	btcTxID = "4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b"
	// The eth_getTransactionByHash example of the Ethereum execution API
	// spec (ethereum.github.io/execution-apis, eth_gettransactionbyhash).
	ethTxHash = "0xa52be92809541220ee0aaaede6047d9a6c5d0cd96a517c854d944ee70a0ebb44"
	// QuickNode's TRON /wallet/gettransactionbyid example (quicknode.com/docs/tron).
	tronTxID = "7c2d4206c03a883dd9066d620335dc1be272a8dc733cfa3f6d10308faa37facc"
	// The getTransaction example signature in GoldRush's Solana JSON-RPC
	// reference (goldrush.dev/docs/api-reference/json-rpc/solana/gettransaction).
	solTxSig = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"
)

func TestValidTxHash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		network money.Network
		hash    string
		want    Reason
	}{
		{"bitcoin", money.Bitcoin, btcTxID, ""},
		{"bitcoin upper case", money.Bitcoin, strings.ToUpper(btcTxID), ""},
		{"bitcoin with 0x", money.Bitcoin, "0x" + btcTxID, Malformed},
		{"bitcoin short", money.Bitcoin, btcTxID[:63], BadLength},
		{"bitcoin not hex", money.Bitcoin, btcTxID[:63] + "g", Malformed},
		{"ethereum", money.Ethereum, ethTxHash, ""},
		{"polygon", money.Polygon, ethTxHash, ""},
		{"ethereum without 0x", money.Ethereum, ethTxHash[2:], Malformed},
		{"ethereum long", money.Ethereum, ethTxHash + "00", BadLength},
		{"ethereum address", money.Ethereum, "0x9858EfFD232B4033E47d90003D41EC34EcaEda94", BadLength},
		{"tron", money.Tron, tronTxID, ""},
		{"tron with 0x", money.Tron, "0x" + tronTxID, Malformed},
		{"solana", money.Solana, solTxSig, ""},
		{"solana address", money.Solana, abandonSolana, BadLength},
		{"solana not base58", money.Solana, solTxSig[:87] + "0", Malformed},
		{"solana too long", money.Solana, solTxSig + "1", BadLength},
		{"solana hex", money.Solana, btcTxID, BadLength},
		{"empty", money.Solana, "", Malformed},
		{"empty hex", money.Tron, "", BadLength},
		{"unsupported", money.Network("litecoin"), btcTxID, Unsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidTxHash(tt.network, tt.hash)
			if ReasonOf(err) != tt.want || (err != nil && tt.want == "") {
				t.Fatalf("ValidTxHash(%s, %q) = %v; want Reason %q", tt.network, tt.hash, err, tt.want)
			}
			if err != nil && err.(*Error).Input != InputTxHash {
				t.Errorf("Input = %q", err.(*Error).Input)
			}
		})
	}
}

// The networks other than bitcoin have one address format on every chain.
func TestValidTestnetAddress(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		network money.Network
		addr    string
	}{
		{money.Ethereum, "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"},
		{money.Polygon, "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"},
		{money.Tron, ledgerTronAddress},
		{money.Solana, abandonSolana},
		{money.Bitcoin, "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl"},
	} {
		if err := ValidTestnetAddress(tt.network, tt.addr); err != nil {
			t.Errorf("ValidTestnetAddress(%s, %s) = %v", tt.network, tt.addr, err)
		}
	}
	if err := ValidAddress("litecoin", "x"); ReasonOf(err) != Unsupported {
		t.Errorf("ValidAddress(litecoin) = %v; want Reason Unsupported", err)
	}
}

func TestValidSolanaAddress(t *testing.T) {
	t.Parallel()
	// The system program (32 zero bytes) and the SPL token program: account
	// ids every Solana explorer shows; and a program-derived address, which
	// is off the curve but a valid address to send to.
	for _, s := range []string{
		abandonSolana,
		"11111111111111111111111111111111",
		"TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
		encodeSolana(offCurve(t)),
	} {
		if err := ValidAddress(money.Solana, s); err != nil {
			t.Errorf("ValidAddress(solana, %s) = %v", s, err)
		}
	}
	for s, want := range map[string]Reason{
		"":                                  Malformed,
		"1111111111111111111111111111111":   BadLength, // 31 zero bytes
		"111111111111111111111111111111111": BadLength, // 33 zero bytes
		"0x9858EfFD232B4033E47d90003D41EC34EcaEda94": Malformed,
		ledgerTronAddress: BadLength,
	} {
		if err := ValidAddress(money.Solana, s); ReasonOf(err) != want {
			t.Errorf("ValidAddress(solana, %q) = %v; want Reason %q", s, err, want)
		}
	}
}
