package chain

import (
	"net/url"
	"strconv"
	"strings"

	"payd"
	"payd/money"
)

// PaymentURI is the URI a customer's wallet scans or opens to pay req on
// network n (spec 2.5 payment_uri):
//
//   - bitcoin, BIP21 (https://github.com/bitcoin/bips/blob/master/bip-0021.mediawiki):
//     bitcoin:ADDRESS?amount=0.00123, the amount in BTC as a plain decimal;
//   - ethereum (chain id 1) and polygon (137), EIP-681
//     (https://eips.ethereum.org/EIPS/eip-681): the native coin as
//     ethereum:ADDRESS@CHAIN?value=WEI, a token as a call of its ERC-20
//     transfer function, ethereum:CONTRACT@CHAIN/transfer?address=ADDRESS&uint256=UNITS,
//     amounts in integer base units (EIP-681 allows only integers there);
//   - solana, Solana Pay transfer requests (https://docs.solanapay.com/spec):
//     solana:ADDRESS?amount=DECIMAL&spl-token=MINT&reference=REF&label=LABEL,
//     with no spl-token for SOL, the amount in whole coins (never
//     scientific notation) and the label percent-encoded;
//   - tron: TRC-20 has no URI standard; payd writes the EIP-681 form that
//     tron wallets read, tron:CONTRACT/transfer?address=ADDRESS&uint256=UNITS.
//
// A zero or missing amount is left out, so the wallet asks the customer
// for it, as every one of these schemes says. PaymentURI returns "" when
// the coin does not move on n or n is not one payd serves.
func PaymentURI(n money.Network, req payd.PaymentRequest) string {
	a := req.Amount.Asset
	if !money.Supports(a, n) {
		return ""
	}
	switch n {
	case money.Bitcoin:
		return "bitcoin:" + req.Deposit.Address + query(param{"amount", decimal(req.Amount)})
	case money.Ethereum, money.Polygon:
		return eip681(n, req)
	case money.Solana:
		return solanaPay(req)
	case money.Tron:
		return trc20(req)
	}
	return ""
}

// eip681 writes an EIP-681 request on n's main chain, with its mainnet
// token contracts.
func eip681(n money.Network, req payd.PaymentRequest) string {
	id, _ := ChainID(n)
	contract, _ := TokenContract(n, req.Amount.Asset)
	return EIP681(uint64(id), contract, req)
}

// EIP681 writes the EIP-681 request (https://eips.ethereum.org/EIPS/eip-681)
// for req on the EVM chain chainID: a plain payment in the native coin,
// ethereum:ADDRESS@CHAIN?value=WEI, when contract is "", or else a call of
// the token contract's transfer(address,uint256),
// ethereum:CONTRACT@CHAIN/transfer?address=ADDRESS&uint256=UNITS. PaymentURI
// writes it for the main chains; an adapter following another chain (a
// test network, a development node) passes that chain's id and contracts,
// so that a wallet is never asked to pay on a chain the node does not
// follow. The caller checks that the coin moves on the chain.
func EIP681(chainID uint64, contract string, req payd.PaymentRequest) string {
	chain := "@" + strconv.FormatUint(chainID, 10)
	if contract == "" {
		return "ethereum:" + req.Deposit.Address + chain + query(param{"value", units(req.Amount)})
	}
	return "ethereum:" + contract + chain + "/transfer" +
		query(param{"address", req.Deposit.Address}, param{"uint256", units(req.Amount)})
}

// solanaPay writes a Solana Pay transfer request with the mainnet mints.
func solanaPay(req payd.PaymentRequest) string {
	mint, _ := TokenContract(money.Solana, req.Amount.Asset)
	return SolanaPay(mint, req)
}

// SolanaPay writes the Solana Pay transfer request
// (https://docs.solanapay.com/spec) for req, with its parameters in the
// order the spec lists them: SOL when mint is "", else the SPL token of
// mint. PaymentURI writes it with the mainnet mints; an adapter following
// another cluster (devnet, testnet) passes the mint configured there, so
// that a wallet is never asked to send a token the node does not watch.
// The caller checks that the coin moves on the cluster.
func SolanaPay(mint string, req payd.PaymentRequest) string {
	return "solana:" + req.Deposit.Address + query(
		param{"amount", decimal(req.Amount)},
		param{"spl-token", mint},
		param{"reference", req.Deposit.Reference},
		param{"label", req.Label},
	)
}

// trc20 writes a TRC-20 transfer with the mainnet token contract.
func trc20(req payd.PaymentRequest) string {
	contract, _ := TokenContract(money.Tron, req.Amount.Asset)
	return TRC20(contract, req)
}

// TRC20 writes the request for req as a call of the TRC-20 contract's
// transfer(address,uint256) in the EIP-681 shape,
// tron:CONTRACT/transfer?address=ADDRESS&uint256=UNITS, without a chain id:
// tron addresses cannot be mistaken for another network's. PaymentURI
// writes it with the mainnet contract; an adapter following a test
// network (nile, shasta) passes the contract there, so that a wallet is
// never asked for mainnet's token. The caller checks that the coin moves
// on the chain.
func TRC20(contract string, req payd.PaymentRequest) string {
	return "tron:" + contract + "/transfer" +
		query(param{"address", req.Deposit.Address}, param{"uint256", units(req.Amount)})
}

// param is one query parameter; an empty value leaves it out.
type param struct{ key, value string }

// query writes the parameters that have a value as ?k=v&k=v, in the order
// given. Values are percent-encoded as encodeURIComponent does (a space is
// %20, never +, which BIP21 and Solana Pay wallets would read as a plus).
func query(ps ...param) string {
	var b strings.Builder
	for _, p := range ps {
		if p.value == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(p.key + "=" + strings.ReplaceAll(url.QueryEscape(p.value), "+", "%20"))
	}
	return b.String()
}

// units is the amount in integer base units (wei, token units), or "" when
// it is not positive.
func units(c money.CoinAmount) string {
	if c.Units == nil || c.Units.Sign() <= 0 {
		return ""
	}
	return c.Units.String()
}

// decimal is the amount in whole coins as the shortest plain decimal
// ("0.00123", "12.5", "3"), or "" when it is not positive. No exponent and
// a leading 0 before the point, as Solana Pay requires and BIP21 expects.
func decimal(c money.CoinAmount) string {
	if c.Units == nil || c.Units.Sign() <= 0 {
		return ""
	}
	digits := c.Asset.BaseDecimals()
	s := c.Units.String()
	if len(s) <= digits {
		s = strings.Repeat("0", digits-len(s)+1) + s
	}
	whole, frac := s[:len(s)-digits], strings.TrimRight(s[len(s)-digits:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}
