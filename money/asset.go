package money

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

// assetInfo is what the package knows about one coin.
type assetInfo struct {
	display  int // spec 2.11 rule 7: decimals shown and quoted
	base     int // decimals of the on-chain integer unit
	stable   bool
	networks []Network // spec 2.11 rule 9, in the spec's order
}

var assetTable = map[Asset]assetInfo{
	USDC: {2, 6, true, []Network{Polygon, Ethereum, Solana}},
	USDT: {2, 6, true, []Network{Tron, Ethereum, Solana}},
	BTC:  {8, 8, false, []Network{Bitcoin}},
	ETH:  {6, 18, false, []Network{Ethereum}},
	SOL:  {4, 9, false, []Network{Solana}},
}

// ParseAsset returns the coin spelled exactly s ("USDC", not "usdc"), for the
// same reason as ParseCurrency.
func ParseAsset(s string) (Asset, bool) {
	if a := Asset(s); a.Valid() {
		return a, true
	}
	return "", false
}

// Valid reports whether a is a supported coin.
func (a Asset) Valid() bool {
	_, ok := assetTable[a]
	return ok
}

// Decimals is how many decimals a quoted amount of the coin has (spec 2.11
// rule 7). Checkout amounts are rounded to it; amounts seen on chain may be
// finer. It is 0 for an unknown coin.
func (a Asset) Decimals() int { return assetTable[a].display }

// BaseDecimals is how many decimals the coin's on-chain integer unit has
// (satoshi 8, wei 18, lamport 9, USDC and USDT token units 6). Every
// CoinAmount counts these units, so nothing a chain reports is ever rounded
// away. It is 0 for an unknown coin.
func (a Asset) BaseDecimals() int { return assetTable[a].base }

// Stable reports whether the coin counts as exactly one US dollar (spec 2.11
// rule 8), whatever a price source says it trades at.
func (a Asset) Stable() bool { return assetTable[a].stable }

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

// ParseNetwork returns the network spelled exactly s ("ethereum"), for the
// same reason as ParseCurrency.
func ParseNetwork(s string) (Network, bool) {
	if n := Network(s); n.Valid() {
		return n, true
	}
	return "", false
}

// Valid reports whether n is a supported network.
func (n Network) Valid() bool {
	for _, x := range Networks {
		if x == n {
			return true
		}
	}
	return false
}

// Native is the network's own coin, the one its transaction fees are paid in,
// when payd accepts it: BTC on bitcoin, ETH on ethereum, SOL on solana.
// Polygon (POL) and tron (TRX) return "" because their native coins are not
// among the accepted assets; a caller needing the fee coin's name for those
// must not assume one of ours.
func (n Network) Native() Asset {
	switch n {
	case Bitcoin:
		return BTC
	case Ethereum:
		return ETH
	case Solana:
		return SOL
	}
	return ""
}

// NetworksFor lists the networks the coin is accepted on (spec 2.11 rule 9),
// in the spec's order. The slice is a fresh copy the caller may keep or change.
func NetworksFor(a Asset) []Network {
	return append([]Network(nil), assetTable[a].networks...)
}

// Supports reports whether the coin is accepted on the network.
func Supports(a Asset, n Network) bool {
	for _, x := range assetTable[a].networks {
		if x == n {
			return true
		}
	}
	return false
}

// The fee coins: the native coins of polygon (POL) and tron (TRX), in which
// those networks charge their transaction fees. payd never offers or
// accepts them, so they are not in Assets and not Valid; it only prices
// them, to show a network fee in US cents.
const (
	POL Asset = "POL"
	TRX Asset = "TRX"
)

// FeeCoins lists the fee coins the rate sources are asked to price, in a
// stable order.
var FeeCoins = []Asset{POL, TRX}
