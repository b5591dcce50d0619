package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"payd/store/storetest"
)

// backupShop is a business on a payd serve --dev with three payments.
type backupShop struct {
	srv *server
	api apiClient
	ids []string
}

func newBackupShop(t *testing.T, dsn string) *backupShop {
	t.Helper()
	s := start(t, dsn)
	var biz newBusiness
	if err := json.Unmarshal(cli(t, dsn, "business", "create", "--name", "Shop", "--email", "o@shop.example", "--json"),
		&biz); err != nil {
		t.Fatal(err)
	}
	shop := &backupShop{srv: s, api: apiClient{t: t, base: s.base, key: biz.SecretKey}}
	for _, amount := range []int{1000, 2500, 99900} {
		p := shop.api.call(201, "POST", "/payments", map[string]any{"amount": amount, "currency": "USD",
			"description": "order", "metadata": map[string]any{"order": fmt.Sprint(amount)}})
		shop.ids = append(shop.ids, p["id"].(string))
	}
	return shop
}

// payments lists the business's payments as payd serves them, newest
// first, without their url (the server's own address, which a restored
// payd does not share in the test).
func (s *backupShop) payments() []string {
	s.api.t.Helper()
	code, body := s.api.try("GET", "/payments?limit=100", nil)
	var list struct{ Data []map[string]any }
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil {
		s.api.t.Fatalf("GET /payments: %d %v %s", code, err, body)
	}
	var out []string
	for _, p := range list.Data {
		delete(p, "url")
		b, _ := json.Marshal(p)
		out = append(out, string(b))
	}
	if len(out) != len(s.ids) {
		s.api.t.Fatalf("%d payments served, want %d", len(out), len(s.ids))
	}
	return out
}

// servedBy starts a fresh payd serve --dev on dsn and points the shop's
// client at it.
func (s *backupShop) servedBy(t *testing.T, dsn string) *backupShop {
	t.Helper()
	srv := start(t, dsn)
	return &backupShop{srv: srv, api: apiClient{t: t, base: srv.base, key: s.api.key}, ids: s.ids}
}

// TestBackupSQLite takes a backup of a serving SQLite database with payd
// backup, and a fresh payd on the backup file serves the same payments
// (and not one made after the backup). A backup never overwrites a file,
// and on PostgreSQL the command points at pg_dump.
func TestBackupSQLite(t *testing.T) {
	dsn := storetest.SQLiteDSN(t)
	shop := newBackupShop(t, dsn)
	before := shop.payments()
	path := filepath.Join(t.TempDir(), "backup.db")
	out := cli(t, dsn, "backup", "--to", path)
	if !bytes.Contains(out, []byte("backed up")) {
		t.Fatalf("payd backup printed %q", out)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the backup file: %v, %v; want mode 0600", info, err)
	}
	shop.api.call(201, "POST", "/payments", map[string]any{"amount": 500, "currency": "USD"}) // after the backup
	shop.srv.stop(t)

	restored := shop.servedBy(t, "sqlite:"+path)
	if after := restored.payments(); !slices.Equal(after, before) {
		t.Fatalf("the restored payd serves\n%v\nwant\n%v", after, before)
	}
	for _, id := range shop.ids {
		restored.api.call(200, "GET", "/payments/"+id, nil)
	}
	restored.srv.stop(t)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "--to", path, "--database", dsn}, "exists already"},
		{[]string{"backup", "--database", dsn}, "--to PATH is required"},
		{[]string{"backup", "--to", path + ".2", "--database", "postgres://u@127.0.0.1:1/x"}, "pg_dump"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), c.args, func(string) string { return "" }, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("payd %v = %v, want an error saying %q", c.args, err, c.want)
		}
	}
}

// TestBackupPostgres follows docs/operations.md on PostgreSQL: pg_dump
// --format=custom of payd's schema while payd serves, pg_restore into a
// new database, and a fresh payd there serves the same payments.
func TestBackupPostgres(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	for _, tool := range []string{"pg_dump", "pg_restore", "createdb", "dropdb", "psql"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	shop := newBackupShop(t, dsn)
	before := shop.payments()
	u, _ := url.Parse(dsn)
	schema := u.Query().Get("search_path")
	base := *u
	base.RawQuery = ""
	dump := filepath.Join(t.TempDir(), "payd.dump")
	if out, err := exec.Command("pg_dump", "--format=custom", "--schema="+schema, "--file="+dump, base.String()).
		CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	shop.srv.stop(t)

	restoredDB := "payd_restore_" + strings.TrimPrefix(schema, "payd_test_")
	target := base
	target.Path = "/" + restoredDB
	pg := func(tool string, args ...string) {
		t.Helper()
		if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", tool, args, err, out)
		}
	}
	pg("createdb", "--maintenance-db="+base.String(), restoredDB)
	t.Cleanup(func() {
		if out, err := exec.Command("dropdb", "--force", "--maintenance-db="+base.String(), restoredDB).
			CombinedOutput(); err != nil {
			t.Errorf("dropdb %s: %v\n%s", restoredDB, err, out)
		}
	})
	// payd's search indexes use pg_trgm, an extension installed in the
	// database rather than in payd's schema: a whole-database dump has it.
	pg("psql", "--quiet", "--command=CREATE EXTENSION IF NOT EXISTS pg_trgm", target.String())
	if out, err := exec.Command("pg_restore", "--exit-on-error", "--no-owner", "--dbname="+target.String(), dump).
		CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}
	q := target.Query()
	q.Set("search_path", schema)
	target.RawQuery = q.Encode()
	restored := shop.servedBy(t, target.String())
	if after := restored.payments(); !slices.Equal(after, before) {
		t.Fatalf("the restored payd serves\n%v\nwant\n%v", after, before)
	}
	restored.srv.stop(t)
}
