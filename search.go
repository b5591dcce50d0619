package payd

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// SearchKind is a kind of object GET /search returns (spec 4.2).
type SearchKind string

// The searchable kinds.
const (
	SearchLink     SearchKind = "link"
	SearchCustomer SearchKind = "customer"
	SearchPayment  SearchKind = "payment"
)

// SearchKinds lists the kinds in their tie order: within one ranking tier,
// links come before customers, and customers before payments.
var SearchKinds = []SearchKind{SearchLink, SearchCustomer, SearchPayment}

// Area is the key area that must be readable to search the kind.
func (k SearchKind) Area() Area {
	switch k {
	case SearchLink:
		return AreaLinks
	case SearchCustomer:
		return AreaCustomers
	}
	return AreaPayments
}

// The ranking tiers of spec 4.2, best first.
const (
	// TierExact is an exact id, code, email, transaction hash or address.
	TierExact = 1
	// TierWord is a word that starts with the query.
	TierWord = 2
	// TierAnywhere is the query anywhere in a matched field.
	TierAnywhere = 3
)

// SearchPosition is where a ranked search result stands: results are
// ordered by Tier, then kind in SearchKinds order, then newest CreatedAt
// first, then ID descending.
type SearchPosition struct {
	Tier      int
	Kind      SearchKind
	CreatedAt time.Time
	ID        string
}

// SearchQuery asks for one page of a business's ranked search results.
type SearchQuery struct {
	BusinessID string
	// Text is the query as the caller typed it (at most 100 characters).
	Text string
	// Kinds are the kinds to search, each at most once.
	Kinds []SearchKind
	// Limit is how many hits to return at most.
	Limit int
	// After, when set, returns only results ranked after this position.
	After *SearchPosition
}

// SearchHit is one ranked result; the caller loads the object by Kind and ID.
type SearchHit = SearchPosition

// SearchStore searches payments, customers and links (spec 4.2) and keeps
// the search index. Every method is scoped by business.
type SearchStore interface {
	// Search returns up to q.Limit hits in rank order after q.After.
	// Results never lag the data: changes the index has not caught up with
	// are searched directly.
	Search(ctx context.Context, q SearchQuery) ([]SearchHit, error)
	// IndexSearch brings up to max changed objects into the search index
	// and returns how many it handled; 0 means the index is up to date.
	IndexSearch(ctx context.Context, max int) (int, error)
}

// SearchFold folds s for case-insensitive comparison with simple Unicode
// case folding (the folding of strings.EqualFold): every rune becomes the
// lower case of the smallest rune it folds to, so "K", "k" and the Kelvin
// sign, or "Σ", "σ" and "ς", fold alike. It is computed in Go so that both
// databases compare the same strings.
func SearchFold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// foldRune returns the lower case of the smallest rune in r's fold orbit.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		m = min(m, f)
	}
	return unicode.ToLower(m)
}

// SearchWords folds s and reduces it to its words separated by single
// spaces. A word is a run of letters, digits and combining marks; every
// other character separates words, so "Ada.Lovelace@Example.com" becomes
// "ada lovelace example com" and "12.50" becomes "12 50".
func SearchWords(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	gap := false
	for _, r := range s {
		if !isWordRune(r) {
			gap = b.Len() > 0
			continue
		}
		if gap {
			b.WriteByte(' ')
			gap = false
		}
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// isWordRune reports whether r belongs to a word.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)
}
