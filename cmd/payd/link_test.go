package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"payd"
	"payd/clock"
	"payd/store"
	"payd/store/storetest"
)

// TestLinkDisable drives payd link disable against a database another
// process (the server) holds open, on both databases.
func TestLinkDisable(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		db := storetest.OpenDSN(t, dsn, clock.Real{})
		biz := storedBusiness(t, db)
		l := &payd.Link{ID: payd.NewID(payd.PrefixLink), BusinessID: biz.ID, Code: payd.RandomString(payd.LinkCodeLength),
			Name: "Phish", Amount: 500, Currency: "USD", Status: payd.LinkActive, CreatedAt: biz.CreatedAt, UpdatedAt: biz.CreatedAt}
		if err := db.CreateLink(ctx, l); err != nil {
			t.Fatal(err)
		}
		var out struct {
			LinkID     string `json:"link_id"`
			BusinessID string `json:"business_id"`
			Status     string `json:"status"`
			DisabledAt string `json:"disabled_at"`
		}
		raw := cli(t, dsn, "link", "disable", "--link", l.ID, "--reason", "reported as phishing", "--json",
			"--public-url", "https://pay.example/")
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		if out.LinkID != l.ID || out.BusinessID != biz.ID || out.Status != "disabled" || out.DisabledAt == "" {
			t.Fatalf("output %s", raw)
		}
		got, err := db.LinkByID(ctx, biz.ID, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != payd.LinkDisabled || got.DisabledReason != "reported as phishing" || got.DisabledAt == nil {
			t.Fatalf("stored link %+v", got)
		}
		wantDisabledEvent(t, db, l, "https://pay.example")
		if text := string(cli(t, dsn, "link", "disable", "--link", l.ID)); !strings.Contains(text, "disabled link "+l.ID) {
			t.Fatalf("second disable printed %q", text)
		}
		wantDisabledEvent(t, db, l, "https://pay.example") // told once
		// Without --public-url, the url is built on --addr, as payd serve builds it.
		other := &payd.Link{ID: payd.NewID(payd.PrefixLink), BusinessID: biz.ID, Code: payd.RandomString(payd.LinkCodeLength),
			Name: "Phish 2", Amount: 500, Currency: "USD", Status: payd.LinkActive, CreatedAt: biz.CreatedAt, UpdatedAt: biz.CreatedAt}
		if err := db.CreateLink(ctx, other); err != nil {
			t.Fatal(err)
		}
		cli(t, dsn, "link", "disable", "--link", other.ID, "--addr", "10.0.0.5:9000")
		wantDisabledEvent(t, db, other, "http://10.0.0.5:9000")
		err = run(ctx, []string{"link", "disable", "--link", payd.NewID(payd.PrefixLink), "--database", dsn},
			func(string) string { return "" }, &bytes.Buffer{}, &bytes.Buffer{})
		if payd.ErrorCode(err) != payd.ErrNotFound {
			t.Fatalf("unknown link: %v", err)
		}
	})
}

// wantDisabledEvent checks that the business was told, once, by a
// link.disabled event carrying the link as the API shows it.
func wantDisabledEvent(t *testing.T, db *store.DB, l *payd.Link, public string) {
	t.Helper()
	events, err := db.EventsOf(context.Background(), l.BusinessID, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].Type != payd.EventLinkDisabled || events[0].Actor.Kind != payd.ActorSystem {
		t.Fatalf("events of the link: %+v", events)
	}
	var data struct {
		ID, Kind, URL, Status string
		DisabledAt            *string `json:"disabled_at"`
	}
	if err := json.Unmarshal(events[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.ID != l.ID || data.Kind != "link" || data.URL != public+"/l/"+l.Code || data.Status != "disabled" || data.DisabledAt == nil {
		t.Fatalf("link.disabled data: %s", events[0].Data)
	}
}

// TestLinkDisableUsage covers the mistakes caught before opening a database.
func TestLinkDisableUsage(t *testing.T) {
	for _, args := range [][]string{
		{"link"}, {"link", "enable", "--link", "lnk_a"}, {"link", "disable"}, {"link", "disable", "--link", "cst_abc"},
		{"link", "disable", "--link", "lnk_abc", "--reason", "bad\x00reason"}, {"link", "disable", "--link", "lnk_abc", "extra"},
	} {
		err := run(context.Background(), args, func(string) string { return "" }, &bytes.Buffer{}, &bytes.Buffer{})
		var u usageError
		if !errors.As(err, &u) {
			t.Errorf("payd %v: got %v, want a usage error", args, err)
		}
	}
}
