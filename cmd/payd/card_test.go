package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"payd/store/storetest"
)

// TestCardFlag checks --card and PAYD_CARD: the sandbox by default with
// --dev, none otherwise, and the sandbox refused without --dev.
func TestCardFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string // the provider, or "usage" for a refusal
	}{
		{nil, nil, cardNone},
		{[]string{"--dev"}, nil, cardSandbox},
		{[]string{"--dev", "--card", "none"}, nil, cardNone},
		{nil, map[string]string{"PAYD_DEV": "true", "PAYD_CARD": "none"}, cardNone},
		{[]string{"--card", "sandbox"}, nil, "usage"},
		{nil, map[string]string{"PAYD_CARD": "sandbox"}, "usage"},
		{[]string{"--dev", "--card", "visa"}, nil, "usage"},
		{nil, map[string]string{"PAYD_CARD": "stripe"}, "usage"},
		{nil, map[string]string{"PAYD_CARD": "stripe", "PAYD_STRIPE_SECRET_KEY": "sk_test_1"}, "usage"},
		{nil, map[string]string{"PAYD_CARD": "stripe", "PAYD_STRIPE_SECRET_KEY": "sk_test_1",
			"PAYD_STRIPE_WEBHOOK_SECRET": "whsec_1"}, cardStripe},
	} {
		var cfg Config
		fs := cfg.newFlagSet("serve", io.Discard)
		cfg.addServeFlags(fs)
		if err := parse(fs, c.args, func(k string) string { return c.env[k] }); err != nil {
			t.Fatal(err)
		}
		err := cfg.checkCard()
		if _, usage := err.(usageError); usage != (c.want == "usage") || (!usage && cfg.cardChoice() != c.want) {
			t.Errorf("%v %v: %q, %v; want %s", c.args, c.env, cfg.cardChoice(), err, c.want)
		}
		if c.want == "usage" && c.args != nil && c.args[0] == "--card" && !strings.Contains(err.Error(), "--dev") {
			t.Errorf("the refusal does not say --dev is needed: %v", err)
		}
	}
}

// TestServeSandboxPages: payd serve --dev serves the sandbox's pages at
// /sandbox/card/ beside the API, a test card paid there reaches the
// checkout at once (the sandbox tells the server, no poll needed), and
// `payd pause card` is accepted.
func TestServeSandboxPages(t *testing.T) {
	dsn := storetest.SQLiteDSN(t)
	s := start(t, dsn)
	root := strings.TrimSuffix(s.base, "/api/v1")
	var keys struct {
		SecretKey string `json:"secret_key"`
	}
	out := cli(t, dsn, "business", "create", "--name", "Ada's Books", "--email", "ada@example.com", "--wallet", "generate", "--json")
	if err := json.Unmarshal(out, &keys); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	c := &crashClient{base: s.base, key: keys.SecretKey}
	must := func(v map[string]any, err error) map[string]any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	pay := must(c.want(201, "POST", "/payments", map[string]any{"amount": 10_000, "currency": "USD"},
		map[string]string{"Idempotency-Key": "p1"}, false))
	chk := must(c.want(201, "POST", "/checkouts", map[string]any{"payment_id": pay["id"], "rail": "card", "asset": "USDC",
		"network": "polygon", "email": "ada@example.com"}, map[string]string{"Idempotency-Key": "c1"}, false))
	id := chk["id"].(string)
	chk = must(c.want(200, "POST", "/checkouts/"+id+"/card/session", map[string]any{"route": 1},
		map[string]string{"Idempotency-Key": "s1"}, false))
	page, _ := chk["card"].(map[string]any)["provider_url"].(string)
	if !strings.HasPrefix(page, root+"/sandbox/card/cs_") {
		t.Fatalf("provider_url = %q", page)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.PostForm(page, url.Values{"number": {"4242424242424242"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(res.Header.Get("Location"), "?checkout="+id) {
		t.Fatalf("paying: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	chk = must(c.want(200, "GET", "/checkouts/"+id, nil, nil, false))
	if card := chk["card"].(map[string]any); card["status"] != "delivered" || card["last4"] != "4242" || chk["status"] != "processing" {
		t.Fatalf("after paying: %v", chk)
	}
	for path, want := range map[string]int{"/sandbox/card/style.css": 200, "/sandbox/card/cs_none": 404} {
		res, err := http.Get(root + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
	cli(t, dsn, "pause", "card", "--reason", "test")
	if list := cli(t, dsn, "pause", "--list"); !strings.Contains(string(list), "card") {
		t.Fatalf("pause list: %s", list)
	}
	cli(t, dsn, "resume", "card")
}
