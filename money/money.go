// Package money holds payd's exact arithmetic: price currencies, coins and
// networks, exact decimal rates, conversion to US cents and coin amounts,
// and fees. Nothing here uses floating point.
package money

// Currency is a price currency. Every supported currency has two minor digits.
type Currency string

// The price currencies of the specification.
const (
	USD Currency = "USD"
	EUR Currency = "EUR"
	GBP Currency = "GBP"
	CAD Currency = "CAD"
	AUD Currency = "AUD"
)

// Currencies lists the price currencies in a stable order.
var Currencies = []Currency{USD, EUR, GBP, CAD, AUD}

// Valid reports whether c is a supported currency.
func (c Currency) Valid() bool {
	for _, x := range Currencies {
		if x == c {
			return true
		}
	}
	return false
}

// Asset is a coin.
type Asset string

// The coins of the specification.
const (
	USDC Asset = "USDC"
	USDT Asset = "USDT"
	BTC  Asset = "BTC"
	ETH  Asset = "ETH"
	SOL  Asset = "SOL"
)

// Assets lists the coins in a stable order.
var Assets = []Asset{USDC, USDT, BTC, ETH, SOL}

// Network is a blockchain a coin moves on.
type Network string

// The networks of the specification.
const (
	Bitcoin  Network = "bitcoin"
	Ethereum Network = "ethereum"
	Polygon  Network = "polygon"
	Solana   Network = "solana"
	Tron     Network = "tron"
)

// Networks lists the networks in a stable order.
var Networks = []Network{Bitcoin, Ethereum, Polygon, Solana, Tron}
