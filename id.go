package payd

import (
	"crypto/rand"
	"strings"
)

// Id prefixes of the specification (section 2) and of payd's own objects.
const (
	PrefixBusiness = "biz_"
	PrefixAPIKey   = "key_"
	PrefixRequest  = "req_"
	PrefixPayment  = "pmt_"
	PrefixCustomer = "cst_"
	PrefixLink     = "lnk_"
	PrefixCheckout = "chk_"
	PrefixWallet   = "wal_"
	PrefixWebhook  = "whk_"
	PrefixDelivery = "dlv_"
	PrefixEvent    = "evt_"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewID returns prefix followed by 24 random base62 characters (about 143
// bits), enough that ids never collide and cannot be guessed.
func NewID(prefix string) string {
	return prefix + RandomString(24)
}

// RandomString returns n characters drawn uniformly from base62 using the
// system's cryptographic random source.
func RandomString(n int) string {
	var b strings.Builder
	b.Grow(n)
	buf := make([]byte, n+n/2)
	for b.Len() < n {
		_, _ = rand.Read(buf) // crypto/rand.Read never fails (Go 1.24+).
		for _, c := range buf {
			// 248 = 4*62: rejecting the top values keeps the draw uniform.
			if c < 248 && b.Len() < n {
				b.WriteByte(base62[c%62])
			}
		}
	}
	return b.String()
}

// HasPrefix reports whether id has the given prefix and a non-empty,
// base62 remainder no longer than 64 characters.
func HasPrefix(id, prefix string) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || rest == "" || len(rest) > 64 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if strings.IndexByte(base62, rest[i]) < 0 {
			return false
		}
	}
	return true
}
