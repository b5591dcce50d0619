package solana

import "testing"

// TestAssociatedTokenAccount checks the derivation against addresses the
// SDKs derive: solders' test (pypi solders, tests/test_token.py), Solana.Swift's
// AssociatedTokenProgramTests (mainnet USDC) and a devnet USDC example of
// @solana/spl-token's getAssociatedTokenAddress.
func TestAssociatedTokenAccount(t *testing.T) {
	for _, c := range []struct{ owner, mint, want string }{
		{"5d21Nx19eZBThbExCn1ESAk3RGmE8Rdp9PKMWZ2VedSK", "3CqfBkrmRsK3uXZaxktvTeeBkJp4yeFKs4mUi2jhKExz",
			"Aumq2SPVzZccYL3UAhvXoDDkNYLZr2zpyxLuJiyx79te"},
		{"3h1zGmCwsRJnVk5BuRNMLsPaQu1y2aqXqXDWYCgrp5UG", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
			"3uetDDizgTtadDHZzyy9BqxrjQcozMEkxzbKhfZF4tG3"},
		{"5waJka9MrCgPFoLo3SQSjLDTGnkoDcwYYPnpk4YNJS6i", "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
			"HmBpVD6N1vuGvQpS8KrwWH6Tr8rSwXQBEDKn5VXW6yyw"},
	} {
		got, err := AssociatedTokenAccount(c.owner, c.mint)
		if err != nil || got != c.want {
			t.Errorf("ATA of %s for %s = %q, %v; want %s", c.owner, c.mint, got, err, c.want)
		}
	}
	if _, err := AssociatedTokenAccount("x", "y"); err == nil {
		t.Error("an owner that is not 32 bytes was taken")
	}
}
