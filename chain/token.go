// Package chain holds what every network adapter shares: the payment URIs
// a customer's wallet scans (BIP21, EIP-681, Solana Pay, the TRC-20 form),
// the mainnet token contracts and mints, the EVM chain ids, and how the
// adapters for real nodes price a fee, keep a reading and quote a node in
// an error (upstream.go). The simulated networks of chain/devnet and the adapters for real nodes build
// their payd.Network on it, so a checkout shows the same URI whichever
// backs the network.
package chain

import (
	"context"

	"payd/money"
)

// tokens are the mainnet contracts (ERC-20 on ethereum and polygon, TRC-20
// on tron) and mints (SPL on solana) of the stablecoins payd accepts, as
// their issuers publish them (Circle for USDC, Tether for USDT). On polygon
// it is Circle's native USDC, not the older bridged USDC.e
// (0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174), which is another token.
var tokens = map[money.Network]map[money.Asset]string{
	money.Ethereum: {
		money.USDC: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
		money.USDT: "0xdAC17F958D2ee523a2206206994597C13D831ec7",
	},
	money.Polygon: {
		money.USDC: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
	},
	money.Solana: {
		money.USDC: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
		money.USDT: "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
	},
	money.Tron: {
		money.USDT: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
	},
}

// TokenContract returns the mainnet contract address (ethereum, polygon,
// tron) or mint (solana) of coin a on network n. It reports false for a
// network's native coin (BTC, ETH, SOL), which has no contract, and for a
// coin that does not move on n.
func TokenContract(n money.Network, a money.Asset) (string, bool) {
	c, ok := tokens[n][a]
	return c, ok
}

// ChainID returns the EIP-155 chain id of an EVM network (1 for ethereum,
// 137 for polygon) and false for the networks that are not EVM chains.
// Payment URIs carry it so that a wallet cannot send on the wrong chain.
func ChainID(n money.Network) (int, bool) {
	switch n {
	case money.Ethereum:
		return 1, true
	case money.Polygon:
		return 137, true
	}
	return 0, false
}

// Price gives a coin's price in US cents, for the adapters' network-fee
// estimates (FeeEstimateUSD): cmd/payd answers it from the latest
// exchange rates.
type Price func(ctx context.Context, a money.Asset) (cents int64, err error)
