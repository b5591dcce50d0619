package api

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// spec82 is spec 8.2's table: each limited route with its budget; routes
// in one group share one budget. Routes not mounted yet (built on other
// branches) are listed too: TestRouteLimits logs them and holds them to
// their rule as soon as they exist.
var spec82 = []struct {
	routes []string
	rule   rateRule
}{
	{[]string{"POST /checkouts"}, rateRule{30, 10 * time.Minute}},
	{[]string{"POST /accounts"}, rateRule{10, time.Hour}},
	{[]string{"POST /accounts/verify", "POST /accounts/verify/resend"}, rateRule{20, 10 * time.Minute}},
	{[]string{"POST /sessions"}, rateRule{30, 10 * time.Minute}},
	{[]string{"POST /sessions/two-factor"}, rateRule{30, 10 * time.Minute}},
	{[]string{"POST /passkeys/authentication/options", "POST /passkeys/authentication/verify"}, rateRule{60, 10 * time.Minute}},
	{[]string{"POST /me/password", "POST /me/two-factor", "POST /sessions/current/step-up",
		"POST /sessions/current/step-up/options"}, rateRule{20, 10 * time.Minute}},
	{[]string{"POST /me/passkeys/registration/options", "POST /me/passkeys"}, rateRule{20, 10 * time.Minute}},
	{[]string{"POST /me/email"}, rateRule{10, time.Hour}},
	{[]string{"POST /password-resets"}, rateRule{5, time.Hour}},
	{[]string{"POST /password-resets/check", "POST /password-resets/confirm", "POST /email-changes/undo",
		"POST /wallet-changes/cancel"}, rateRule{20, 10 * time.Minute}},
	{[]string{"GET /public/referrals/{code}"}, rateRule{60, 10 * time.Minute}},
}

// spec82Extra are limited routes the spec's table does not name: each
// shares the budget of a spec route ("POST /checkouts") or has a rule of
// its own ("rule:NAME"), which no spec route may then use. They are held
// to it too.
var spec82Extra = map[string]string{
	// A remainder checkout is a checkout (spec 4.4): one budget.
	"POST /checkouts/{id}/remainder": "POST /checkouts",
	// So are a card checkout's attempts: going to the provider opens a
	// provider session, and a retry opens a route (docs/card.md).
	"POST /checkouts/{id}/card/session": "POST /checkouts",
	"POST /checkouts/{id}/card/retry":   "POST /checkouts",
	// An email change's code routes, held like sign-up's (docs/accounts.md).
	"POST /me/email/verify": "rule:me_email_verify",
	"POST /me/email/resend": "rule:me_email_verify",
}

// spec82Check compares a route table with spec 8.2. problems says what
// is wrong: a spec route without its limit or with other numbers, a group
// split over several budgets, a limited route the spec does not name.
// absent lists the spec's routes the table does not have yet.
func spec82Check(routes []route) (problems, absent []string) {
	mounted := map[string]route{}
	for _, rt := range routes {
		mounted[rt.method+" "+rt.path] = rt
	}
	named := map[string]string{} // spec route → its rule name
	for _, g := range spec82 {
		shared := ""
		for _, name := range g.routes {
			rt, ok := mounted[name]
			if !ok {
				absent = append(absent, name)
				continue
			}
			named[name] = rt.limit
			if rule, ok := rateRules[rt.limit]; !ok || rule != g.rule {
				problems = append(problems, fmt.Sprintf("%s is limited by %q (%+v), want %d per %v",
					name, rt.limit, rule, g.rule.Limit, g.rule.Window))
			}
			if shared != "" && rt.limit != shared {
				problems = append(problems, fmt.Sprintf("%s has budget %q, but its group shares %q", name, rt.limit, shared))
			}
			shared = rt.limit
		}
	}
	specRules := map[string]bool{}
	for _, rule := range named {
		specRules[rule] = true
	}
	for name, rt := range mounted {
		if _, ok := named[name]; ok || rt.limit == "" {
			continue
		}
		if _, ok := spec82Extra[name]; !ok {
			problems = append(problems, fmt.Sprintf("%s is limited by %q, which spec 8.2 does not give it", name, rt.limit))
		}
	}
	for name, of := range spec82Extra {
		rt, ok := mounted[name]
		if !ok {
			continue
		}
		want, own := strings.CutPrefix(of, "rule:")
		if !own {
			want = named[of]
		}
		if _, known := rateRules[want]; rt.limit != want || !known || own && specRules[want] {
			problems = append(problems, fmt.Sprintf("%s is limited by %q, want %q (%s) of its own", name, rt.limit, want, of))
		}
	}
	slices.Sort(problems)
	return problems, absent
}

// TestRouteLimits holds every route to spec 8.2. Statically: each route
// the spec names carries its rule, and a table missing one fails.
// Through the server: for every limited route, the rule's Limit requests
// from one address pass the limiter, the next is 429 rate_limited with
// Retry-After, every route sharing the rule is then refused too, a new
// clock-aligned window still refuses (the window slides), and after
// Retry-After one more gets through. Bodies are empty objects: the
// limiter runs before authentication and decoding, so a 400 or 401 is as
// good a pass as a 201.
func TestRouteLimits(t *testing.T) {
	s := &Server{}
	s.opts.Dev = true
	problems, absent := spec82Check(s.routeTable())
	for _, p := range problems {
		t.Error(p)
	}
	for _, a := range absent {
		t.Logf("spec 8.2 route not mounted yet, skipped: %s", a)
	}
	// The check itself fails when a spec route loses its limit.
	for i, rt := range s.routeTable() {
		if rt.limit == "" {
			continue
		}
		broken := s.routeTable()
		broken[i].limit = ""
		if p, _ := spec82Check(broken); len(p) == 0 {
			t.Errorf("spec82Check does not notice %s %s without its limit", rt.method, rt.path)
		}
	}

	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		b.srv.opts.TrustedProxies = mustPrefixes(t, "127.0.0.1/32")
		groups := map[string][]route{}
		for _, rt := range b.srv.routeTable() {
			if rt.limit != "" {
				groups[rt.limit] = append(groups[rt.limit], rt)
			}
		}
		names := make([]string, 0, len(groups))
		for n := range groups {
			names = append(names, n)
		}
		slices.Sort(names)
		for i, name := range names {
			// Each rule from its own address, so budgets never mix.
			walkLimit(t, b, name, groups[name], fmt.Sprintf("198.51.100.%d", i+1))
		}
	})
}

// walkLimit spends rule name's budget on its first route from ip and
// checks the refusals on every route of the group.
func walkLimit(t *testing.T, b *bundle, name string, group []route, ip string) {
	t.Helper()
	rule := rateRules[name]
	hit := func(rt route) *response {
		req := request{method: rt.method, path: limitPath(rt.path), header: map[string]string{"X-Forwarded-For": ip}}
		if rt.method != http.MethodGet {
			req.body = "{}"
		}
		return b.do(req)
	}
	refused := func(r *response, what string) int {
		t.Helper()
		code := ""
		if r.status >= 400 {
			code, _ = r.errorCode(t)
		}
		ra, err := strconv.Atoi(r.header.Get("Retry-After"))
		if r.status != http.StatusTooManyRequests || code != payd.ErrRateLimited || err != nil || ra <= 0 {
			t.Fatalf("rule %s, %s: got %d %s Retry-After %q, want 429 rate_limited with Retry-After",
				name, what, r.status, r.body, r.header.Get("Retry-After"))
		}
		return ra
	}
	now := b.clock.Now()
	b.clock.Advance(now.Truncate(rule.Window).Add(rule.Window).Sub(now))
	first := group[0]
	for n := 1; n <= rule.Limit; n++ {
		if r := hit(first); r.status == http.StatusTooManyRequests {
			if code, _ := r.errorCode(t); code == payd.ErrRateLimited {
				t.Fatalf("rule %s: %s %s refused at hit %d of %d: %s", name, first.method, first.path, n, rule.Limit, r.body)
			}
		}
	}
	refused(hit(first), fmt.Sprintf("%s %s hit %d", first.method, first.path, rule.Limit+1))
	for _, rt := range group[1:] {
		refused(hit(rt), fmt.Sprintf("%s %s after %s spent the shared budget", rt.method, rt.path, first.path))
	}
	// A fixed window would start afresh here; the sliding one still
	// counts the last window's hits.
	b.clock.Advance(rule.Window)
	ra := refused(hit(first), "the start of the next window")
	b.clock.Advance(time.Duration(ra) * time.Second)
	if r := hit(first); r.status == http.StatusTooManyRequests {
		t.Fatalf("rule %s: %s %s still refused after Retry-After %d s: %s", name, first.method, first.path, ra, r.body)
	}
	t.Logf("rule %s (%d per %v): %d route(s) share it; Retry-After %d s at the next window", name, rule.Limit, rule.Window, len(group), ra)
}

// limitPath fills a route pattern's wildcards with a placeholder.
func limitPath(pattern string) string {
	var out strings.Builder
	for {
		i := strings.IndexByte(pattern, '{')
		if i < 0 {
			return out.String() + pattern
		}
		j := strings.IndexByte(pattern[i:], '}')
		out.WriteString(pattern[:i] + "x")
		pattern = pattern[i+j+1:]
	}
}
