package seed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"payd"
	"payd/money"
)

// gen is the generator's state: everything it has made so far that later
// objects refer to. It is used by one goroutine and draws every random
// choice from one seeded source, in a fixed order, so that a seed always
// gives the same data.
type gen struct {
	r     *rand.Rand
	cfg   Config
	rates *payd.ExchangeRates
	// terms are the planted query targets.
	terms Terms
	// provider is the card provider's sending address on each network.
	provider map[money.Network]string
}

// newGen returns a generator for cfg, whose fields are already checked.
func newGen(cfg Config) *gen {
	g := &gen{r: rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)), cfg: cfg, rates: cfg.Rates,
		terms: DefaultTerms, provider: map[money.Network]string{}}
	for _, n := range money.Networks {
		g.provider[n] = address(g.r, n)
	}
	return g
}

// id returns an id made at t, the shape and order of payd.NewID, its random
// part drawn from the seeded source so that ids repeat with the seed.
func (g *gen) id(prefix string, t time.Time) string {
	return payd.IDAt(prefix, t.UnixMilli(), g.base62(16))
}

// base62 returns n characters drawn uniformly from base62.
func (g *gen) base62(n int) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

// pick returns one element of s, uniformly.
func pick[T any](g *gen, s []T) T { return s[g.r.IntN(len(s))] }

// chance reports true with probability p.
func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// weighted returns an index of weights, each chosen in proportion to its
// weight.
func (g *gen) weighted(weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := g.r.IntN(total)
	for i, w := range weights {
		if n < w {
			return i
		}
		n -= w
	}
	return len(weights) - 1
}

// between returns a duration in [lo, hi), at microsecond precision as the
// store keeps times.
func (g *gen) between(lo, hi time.Duration) time.Duration {
	return (lo + time.Duration(g.r.Int64N(int64(hi-lo)))).Truncate(time.Microsecond)
}

// currencyWeights is how often each price currency is used, in
// money.Currencies order (USD, EUR, GBP, CAD, AUD).
var currencyWeights = []int{50, 22, 12, 9, 7}

// currency draws a price currency.
func (g *gen) currency() money.Currency { return money.Currencies[g.weighted(currencyWeights)] }

// paymentTime is when the i-th of n payments of a business was made: the
// year before Now, with the business growing so that the last month has
// about twice the payments of the first. i in order gives times in order.
func (g *gen) paymentTime(i, n int) time.Time {
	// Density 1+x on [0,1]: the CDF is (x + x²/2)/1.5, inverted below.
	u := (float64(i) + g.r.Float64()) / float64(n)
	x := -1 + math.Sqrt(1+3*u)
	at := g.cfg.Now.Add(-Year + time.Duration(x*float64(Year)))
	return at.Truncate(time.Microsecond)
}

// Year is how far back the seeded payments go.
const Year = 365 * 24 * time.Hour

// person is a made-up customer's name and email.
func (g *gen) person(b *business) (name, email string) {
	first, last := pick(g, firstNames), pick(g, lastNames)
	name = first + " " + last
	local := strings.ToLower(first + "." + strings.NewReplacer(" ", "", "'", "").Replace(last))
	domain := pick(g, emailDomains)
	key := local + "@" + domain
	b.emails[key]++
	if n := b.emails[key]; n > 1 {
		local += fmt.Sprint(n)
	}
	return name, local + "@" + domain
}

// country draws the customer's country for a price currency.
func (g *gen) country(c money.Currency) string { return pick(g, countries[string(c)]) }
