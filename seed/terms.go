package seed

import "payd"

// Term is a word planted in the main business's payments so that a
// benchmark knows how many results a search must find: none of the
// vocabulary contains it, so the planted payments are all its matches.
type Term struct {
	// Query is what to search for.
	Query string `json:"query"`
	// Field is where it was planted: description or metadata.KEY.
	Field string `json:"field"`
	// Text is the whole planted value.
	Text string `json:"text"`
	// Payments is how many payments carry it.
	Payments int `json:"payments"`
}

// Terms are the planted search targets: a rare term (1–3 matches, all in
// the oldest quarter of the year, the worst case for a newest-first scan),
// a mid one (about 100) and a broad one (about 10,000, fewer below 200,000
// payments), spread over the year.
type Terms struct {
	Rare  Term `json:"rare"`
	Mid   Term `json:"mid"`
	Broad Term `json:"broad"`
}

// DefaultTerms are the planted words, with the counts still zero.
var DefaultTerms = Terms{
	Rare:  Term{Query: "xylograph", Field: "metadata.gift_message", Text: "With love from the Xylograph society"},
	Mid:   Term{Query: "marzipan", Field: "description", Text: "Marzipan and dark chocolate hamper"},
	Broad: Term{Query: "espresso", Field: "description", Text: "Espresso grinder with steel burrs"},
}

// apply writes the term into a payment's request.
func (t *Term) apply(in *payd.PaymentParams) {
	if t.Field == "description" {
		in.Description = t.Text
		return
	}
	in.Metadata[t.Field[len("metadata."):]] = t.Text
}

// plan picks which payments of the main business carry a term, and counts
// them in g.terms.
func (g *gen) plan(b *business) {
	m := b.payments
	b.plant = map[int]*Term{}
	g.terms.Rare.Payments = g.draw(b, &g.terms.Rare, min(2, m/100+1), m/4+1)
	g.terms.Mid.Payments = g.draw(b, &g.terms.Mid, min(100, m/50), m)
	g.terms.Broad.Payments = g.draw(b, &g.terms.Broad, min(10000, m/20), m)
}

// draw plants t in n distinct payments among the first hi (or all) of b,
// and returns n.
func (g *gen) draw(b *business, t *Term, n, hi int) int {
	hi = min(hi, b.payments)
	if hi == 0 {
		return 0
	}
	for placed := 0; placed < n; {
		i := g.r.IntN(hi)
		if b.plant[i] == nil {
			b.plant[i] = t
			placed++
		}
	}
	return n
}
