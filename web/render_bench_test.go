package web

import (
	"io"
	"testing"
)

// BenchmarkRenderLinkPage renders a link page with nine coins: the part of
// serving a page that is the page's own (the API call is the rest).
func BenchmarkRenderLinkPage(b *testing.B) {
	v, err := loadViews()
	if err != nil {
		b.Fatal(err)
	}
	m := messages{lang: "en", m: english}
	o := offer{Business: business{Name: "Ada's Books"}, AcceptingPayments: true}
	for _, a := range []string{"USDC/polygon", "USDC/ethereum", "USDC/solana", "USDT/tron", "USDT/ethereum",
		"USDT/solana", "BTC/bitcoin", "ETH/ethereum", "SOL/solana"} {
		o.Crypto = append(o.Crypto, cryptoOption{Asset: a[:3], Network: a[5:], Amount: "25.00"})
	}
	p := basePage(m, "/l/abc", "The Go Programming Language", "Paperback", 2500, "USD", o)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.execute(io.Discard, "link.html", "layout", &p); err != nil {
			b.Fatal(err)
		}
	}
}
