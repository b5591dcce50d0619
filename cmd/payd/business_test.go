package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"

	"payd/clock"
	"payd/store"
	"payd/store/storetest"
)

// TestBusinessContact checks that --website and --support-email reach the
// business, which public pages show, and that bad values are refused.
func TestBusinessContact(t *testing.T) {
	dsn := storetest.SQLiteDSN(t)
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
