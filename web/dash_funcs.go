package web

import (
	"html/template"
	"net/url"
	"strings"
	"time"
)

// dashFuncs are the functions the dashboard's templates may call.
var dashFuncs = template.FuncMap{"nextHref": nextHref, "utc": utcText, "groups": groupsOfFour}

// nextHref is the address of a getting-in page (page) that goes on to
// next after. A next that carries a fragment (an invitation's
// "#token=…") keeps it as the link's fragment, which browsers never send:
// put in the query it would reach the server's and proxies' logs.
func nextHref(page, next string) string {
	path, frag, hasFrag := strings.Cut(next, "#")
	href := page
	if path != "" && path != dashBase+"/" {
		href += "?next=" + url.QueryEscape(path)
	}
	if hasFrag {
		href += "#" + frag
	}
	return href
}

// apiTime reads an API timestamp.
func apiTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// utcText shows an API timestamp, a string or a *string, as "25 Nov
// 2026, 19:33 UTC": every dashboard page says times the same way. A nil
// one is "".
func utcText(v any) string {
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case *string:
		if t == nil {
			return ""
		}
		s = *t
	}
	if t, ok := apiTime(s); ok {
		return t.UTC().Format("2 Jan 2006, 15:04 UTC")
	}
	return s
}

// usdText renders US cents as "1,234.50 USD".
func usdText(cents int64) string { return priceText(cents, "USD") }
