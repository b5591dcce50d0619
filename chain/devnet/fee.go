package devnet

import "payd/money"

// fees is what a customer's wallet typically pays, in US cents, to send
// one payment of each coin on each network: a static table, since nothing
// is paid on the devnet, chosen close to mainnet fees at ordinary times so
// that the checkout's network_fee looks like the real thing. The
// assumptions (coin prices BTC $64,000, ETH $3,200, SOL $150, POL $0.40,
// TRX $0.25) are in docs/devnet.md.
var fees = map[money.Network]map[money.Asset]int64{
	// One P2WPKH input to one output plus change, 141 vbytes at 10 sat/vB:
	// 1,410 sat.
	money.Bitcoin: {money.BTC: 90},
	// A plain transfer is 21,000 gas, an ERC-20 transfer about 65,000, at
	// 5 gwei.
	money.Ethereum: {money.ETH: 34, money.USDC: 104, money.USDT: 104},
	// 65,000 gas at 50 gwei of POL is a tenth of a cent; the least a
	// checkout shows is one.
	money.Polygon: {money.USDC: 1},
	// 5,000 lamports a signature plus a small priority fee, to a
	// recipient whose token account exists.
	money.Solana: {money.SOL: 1, money.USDC: 1, money.USDT: 1},
	// A TRC-20 transfer burns about 65,000 energy at 100 sun and 345
	// bandwidth at 1,000 sun without staked TRX: about 6.9 TRX.
	money.Tron: {money.USDT: 172},
}
