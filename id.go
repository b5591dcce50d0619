package payd

import (
	"crypto/rand"
	"strings"

	"payd/clock"
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
	PrefixEmail    = "eml_"
	PrefixPasskey  = "pky_"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewID returns prefix followed by 24 base62 characters: 8 that spell the
// current Unix time in milliseconds, then 16 random ones (about 95 bits,
// enough that ids never collide and cannot be guessed).
//
// The time comes first so that ids made later sort after earlier ones (to the
// millisecond, in byte order): every index keyed by an id then takes new rows
// at its end, where the pages are already in cache, instead of at a random
// page each. With random ids a group commit of n rows wrote about n scattered
// pages once the table was large, and the commit's latency grew with the
// table (docs/storage.md, "Ids"). The time is the wall clock's, not the
// service clock's: it only orders the index and means nothing else; read
// created_at for when an object was made.
func NewID(prefix string) string {
	return IDAt(prefix, clock.Real{}.Now().UnixMilli(), RandomString(idRandom))
}

const (
	idTime   = 8  // base62 digits of the millisecond time: 62^8 ms is about 6,900 years
	idRandom = 16 // base62 random characters after it
)

// IDAt returns prefix, the Unix time ms as idTime base62 digits, then
// random (which must be base62). The seed uses it to make ids of the same
// shape and order from its own time and random source.
func IDAt(prefix string, ms int64, random string) string {
	b := make([]byte, 0, len(prefix)+idTime+len(random))
	b = append(b, prefix...)
	var t [idTime]byte
	u := uint64(max(ms, 0))
	for i := idTime - 1; i >= 0; i-- {
		t[i] = base62[u%62]
		u /= 62
	}
	b = append(b, t[:]...)
	return string(append(b, random...))
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
