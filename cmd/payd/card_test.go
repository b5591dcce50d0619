package main

import (
	"io"
	"net/http"
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
// /sandbox/card/ beside the API, and `payd pause card` is accepted.
func TestServeSandboxPages(t *testing.T) {
	dsn := storetest.SQLiteDSN(t)
	s := start(t, dsn)
	root := strings.TrimSuffix(s.base, "/api/v1")
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
