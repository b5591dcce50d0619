package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/hd"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// TestBusinessContact checks that --website and --support-email reach the
// business, which public pages show, and that bad values are refused.
func TestBusinessContact(t *testing.T) {
	dsn := storetest.SQLiteDSN(t)
	cli(t, dsn, "migrate")
	noenv := func(string) string { return "" }
	var out bytes.Buffer
	err := run(context.Background(), []string{"business", "create", "--name", "Shop", "--email", "o@shop.example",
		"--website", "https://shop.example", "--support-email", "help@shop.example", "--json", "--database", dsn}, noenv, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var res newBusiness
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), dsn, clock.Real{}, storetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b, err := db.BusinessByID(context.Background(), res.BusinessID)
	if err != nil || b.Website != "https://shop.example" || b.SupportEmail != "help@shop.example" {
		t.Fatalf("stored %+v, %v", b, err)
	}
	for _, bad := range [][]string{{"--website", "shop.example"}, {"--website", "ftp://shop.example"}, {"--support-email", "help"}} {
		args := append([]string{"business", "create", "--name", "Shop", "--email", "o@shop.example", "--database", dsn}, bad...)
		if err := run(context.Background(), args, noenv, io.Discard, io.Discard); err == nil {
			t.Errorf("payd %v: accepted", args)
		}
	}
}

// TestBusinessCreateGeneratesWallet follows CONTRACT.md's --wallet
// generate on both databases: the printed phrase gives back exactly the
// stored public keys, and the phrase is nowhere in the database.
func TestBusinessCreateGeneratesWallet(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		cli(t, dsn, "migrate")
		out := cli(t, dsn, "business", "create", "--name", "Shop", "--email", "o@shop.example", "--wallet", "generate", "--json")
		var res newBusiness
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if res.RecoveryPhrase == nil || res.WalletID == nil || !payd.HasPrefix(*res.WalletID, payd.PrefixWallet) {
			t.Fatalf("no phrase or wallet: %s", out)
		}
		phrase := *res.RecoveryPhrase
		if n := len(strings.Fields(phrase)); n != 12 || strings.Join(strings.Fields(phrase), " ") != phrase {
			t.Fatalf("phrase has %d words or odd spacing: %q", n, phrase)
		}
		want, err := hd.WalletFromMnemonic(phrase, "")
		if err != nil {
			t.Fatalf("the printed phrase does not read back: %v", err)
		}
		db, err := store.Open(context.Background(), dsn, clock.Real{}, storetest.Logger(t))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		w, err := db.WalletByBusiness(context.Background(), res.BusinessID)
		if err != nil {
			t.Fatal(err)
		}
		if w.ID != *res.WalletID || w.Source != payd.WalletGenerated || len(w.Keys) != len(money.Networks) {
			t.Fatalf("stored wallet %+v for %s", w, out)
		}
		for _, k := range want.Keys() {
			if w.Keys[k.Network()] != k.String() {
				t.Errorf("%s key stored %q, the phrase gives %q", k.Network(), w.Keys[k.Network()], k.String())
			}
		}
		if w.Keys[money.Polygon] != w.Keys[money.Ethereum] {
			t.Errorf("polygon key %q differs from ethereum's", w.Keys[money.Polygon])
		}
		db.Close()
		wantPhraseNowhere(t, dsn, phrase, w.Keys[money.Bitcoin])

		s := start(t, dsn)
		code, body := get(t, s.base+"/wallet", res.SecretKey)
		if code != 200 || !strings.Contains(string(body), `"id":"`+w.ID+`"`) || !strings.Contains(string(body), `"source":"generated"`) {
			t.Fatalf("GET /wallet: %d %s", code, body)
		}
	})
}

// wantPhraseNowhere fails if the phrase, or any three of its words in a
// row, is in the database: in the SQLite files' bytes (database, WAL,
// shared memory), or in any row of any table of the PostgreSQL schema.
// present, a stored public key, must be found, which shows the search
// looks where the data is.
func wantPhraseNowhere(t *testing.T, dsn, phrase, present string) {
	t.Helper()
	words := strings.Fields(phrase)
	var needles []string
	for i := 0; i+3 <= len(words); i++ {
		needles = append(needles, strings.Join(words[i:i+3], " "))
	}
	var haystacks []string
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			b, err := os.ReadFile(p)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			haystacks = append(haystacks, strings.ToLower(string(b)))
		}
		if len(haystacks[0]) == 0 {
			t.Fatal("the SQLite file is empty")
		}
	} else {
		haystacks = storetest.PostgresRows(t, dsn)
	}
	if !slices.ContainsFunc(haystacks, func(h string) bool { return strings.Contains(h, strings.ToLower(present)) }) {
		t.Fatalf("the stored key %q was not found where the phrase is looked for", present)
	}
	for _, h := range haystacks {
		for _, n := range needles {
			if strings.Contains(h, n) {
				t.Fatalf("the database holds words of the recovery phrase: %q", n)
			}
		}
	}
}

// TestBusinessCreateWalletText checks the words and the warning a person
// reads without --json.
func TestBusinessCreateWalletText(t *testing.T) {
	dsn := storetest.SQLiteDSN(t)
	cli(t, dsn, "migrate")
	out := string(cli(t, dsn, "business", "create", "--name", "Shop", "--email", "o@shop.example", "--wallet", "generate"))
	for _, want := range []string{"wallet          wal_", "  1. ", " 12. ", "shown this once", "payd keeps no copy"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	var words []string
	for _, f := range strings.Fields(out[strings.Index(out, "  1. "):strings.Index(out, "Write the")]) {
		if !strings.HasSuffix(f, ".") {
			words = append(words, f)
		}
	}
	if _, err := hd.WalletFromMnemonic(strings.Join(words, " "), ""); err != nil || len(words) != 12 {
		t.Fatalf("the printed words %q are not a phrase: %v", words, err)
	}
}

// TestGenerateWalletIsDeterministicInEntropy pins the wallet that fixed
// entropy gives: BIP39's all-zero vector, "abandon … about", whose
// published keys hd's tests check.
func TestGenerateWalletIsDeterministicInEntropy(t *testing.T) {
	phrase, w, err := generateWallet("biz_x", bytes.NewReader(make([]byte, 16)), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if phrase != strings.Repeat("abandon ", 11)+"about" {
		t.Fatalf("phrase %q", phrase)
	}
	if w.Keys[money.Bitcoin] != "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs" ||
		w.Keys[money.Solana] != "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk" || w.Source != payd.WalletGenerated {
		t.Fatalf("wallet %+v", w)
	}
	if _, _, err := generateWallet("biz_x", bytes.NewReader(make([]byte, 3)), time.Unix(0, 0)); err == nil {
		t.Fatal("short entropy accepted")
	}
}
