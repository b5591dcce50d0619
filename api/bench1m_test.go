package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/seed"
	"payd/store"
	"payd/store/storetest"
)

// The million-payment benchmark (docs/benchmarks.md): PAYD_BENCH_1M=1 go
// test -run TestBench1M -v -timeout 3h ./api. It seeds 1,000,000 payments
// with payd/seed (PAYD_BENCH_PAYMENTS changes the count for a trial),
// indexes them for search, and keeps the database between runs: a SQLite
// file under PAYD_BENCH_DIR (default the user cache directory) and, with
// PAYD_TEST_POSTGRES, a schema of that database, both named after the seed
// version and count. Then it starts the real server on each database and
// times listing and search requests one after another, and checks that
// both databases return the same objects in the same order.
// PAYD_BENCH_DIALECTS=sqlite or =postgres seeds or measures one only;
// PAYD_BENCH_CASES=search times only the cases whose name holds it. It
// never runs in CI.

// benchSeed and benchNow fix the seeded data, so both databases and every
// run hold the same objects.
const benchSeed = 1

var benchNow = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// benchRuns is how many timed requests each case makes, after benchWarm.
const (
	benchRuns = 200
	benchWarm = 5
)

func TestBench1M(t *testing.T) {
	if os.Getenv("PAYD_BENCH_1M") == "" {
		t.Skip("PAYD_BENCH_1M is not set")
	}
	n := 1_000_000
	if s := os.Getenv("PAYD_BENCH_PAYMENTS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	orders := map[string]map[string][]string{}
	var tables []string
	for _, dialect := range storetest.Dialects {
		if dialect == "postgres" && os.Getenv(storetest.PostgresEnv) == "" {
			continue
		}
		if only := os.Getenv("PAYD_BENCH_DIALECTS"); only != "" && !strings.Contains(only, dialect) {
			continue
		}
		db, sum := benchDB(t, dialect, n)
		table, order := runBench(t, db, sum)
		orders[dialect], tables = order, append(tables, table)
	}
	for _, tb := range tables {
		t.Log("\n" + tb)
	}
	compareOrders(t, orders)
}

// benchDB returns the cached seeded database of dialect, seeding and
// indexing it first when the cache does not hold it yet.
func benchDB(t *testing.T, dialect string, n int) (*store.DB, *seed.Summary) {
	t.Helper()
	dir := os.Getenv("PAYD_BENCH_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(cache, "payd-bench")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("payd_bench_v%d_s%d_n%d", seed.Version, benchSeed, n)
	dsn := "sqlite:" + filepath.Join(dir, name+".db")
	if dialect == "postgres" {
		dsn = benchSchema(t, name)
	}
	summary := filepath.Join(dir, name+"."+dialect+".json")
	sum, err := readSummary(summary)
	if err != nil {
		t.Logf("%s: seeding %d payments (%v)", dialect, n, err)
		resetBenchDB(t, dialect, dsn, name)
	}
	db := storetest.OpenDSN(t, dsn, clock.Real{})
	if sum == nil {
		sum = seedBench(t, db, n)
		writeSummary(t, summary, sum)
	}
	return db, sum
}

// benchSchema creates the schema name unless it exists and returns a DSN
// that uses it.
func benchSchema(t *testing.T, name string) string {
	t.Helper()
	base := os.Getenv(storetest.PostgresEnv)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// resetBenchDB removes what an unfinished seeding left: the SQLite files
// or the PostgreSQL schema, which it creates afresh.
func resetBenchDB(t *testing.T, dialect, dsn, name string) {
	t.Helper()
	if dialect == "sqlite" {
		path := strings.TrimPrefix(dsn, "sqlite:")
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
		}
		return
	}
	storetest.ResetPostgresSchema(t, name)
}

func readSummary(path string) (*seed.Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s seed.Summary
	return &s, json.Unmarshal(b, &s)
}

func writeSummary(t *testing.T, path string, s *seed.Summary) {
	t.Helper()
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// seedBench seeds n payments and indexes them for search, logging the
// time each step took.
func seedBench(t *testing.T, db *store.DB, n int) *seed.Summary {
	t.Helper()
	ctx := context.Background()
	clk := clock.Real{}
	start := clk.Now()
	sum, err := seed.Run(ctx, db, seed.Config{Payments: n, Seed: benchSeed, Now: benchNow, Rates: testRates(benchNow),
		Progress: func(done int) {
			if done%100_000 == 0 {
				t.Logf("%s: %d payments after %s", db.Dialect(), done, clk.Now().Sub(start).Round(time.Second))
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	seeded := clk.Now()
	t.Logf("%s: seeded %d payments, %d customers, %d links in %s", db.Dialect(), sum.Payments, sum.Customers,
		sum.Links, seeded.Sub(start).Round(time.Second))
	for {
		k, err := db.IndexSearch(ctx, 5000)
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			break
		}
	}
	if err := db.Analyze(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: indexed for search and analyzed in %s", db.Dialect(), clk.Now().Sub(seeded).Round(time.Second))
	return sum
}

// benchCase is one timed request: its path with query, and the number of
// pages to walk first, following next_cursor (limit 100), to reach a deep
// position.
type benchCase struct {
	name, path string
	// walk is how many pages of 100 to skip; 0 times the first page.
	walk  int
	class string // listing or search, for the goals
}

// benchCases are the requests timed against the first business.
func benchCases(t *testing.T, db *store.DB, sum *seed.Summary) []benchCase {
	t.Helper()
	tg, terms := sum.Targets, sum.Terms
	after := sum.Now.Add(-30 * 24 * time.Hour).Format(time.RFC3339)
	before := sum.Now.Add(-20 * 24 * time.Hour).Format(time.RFC3339)
	hash, email := exactKeys(t, db, sum)
	return []benchCase{
		{"first page", "/payments?limit=25", 0, "listing"},
		{"page 2,001 (50,000 deep)", "/payments?limit=25", 500, "listing"},
		{"status=pending", "/payments?limit=25&status=pending", 0, "listing"},
		{"status=succeeded, 20,000 deep", "/payments?limit=25&status=succeeded", 200, "listing"},
		{"customer_id (top customer)", "/payments?limit=25&customer_id=" + tg.TopCustomerID, 0, "listing"},
		{"link_id (top link), 5,000 deep", "/payments?limit=25&link_id=" + tg.TopLinkID, 50, "listing"},
		{"metadata[channel]=pos", "/payments?limit=25&metadata%5Bchannel%5D=pos", 0, "listing"},
		{"metadata[order_id] (one match)", "/payments?limit=25&metadata%5Border_id%5D=" + tg.OrderID, 0, "listing"},
		{"created range (10 days)", "/payments?limit=25&created_after=" + after + "&created_before=" + before, 0, "listing"},
		{"sort=amount", "/payments?limit=25&sort=amount", 0, "listing"},
		{"sort=-amount, 20,000 deep", "/payments?limit=25&sort=-amount", 200, "listing"},
		{"rail=card&status=succeeded", "/payments?limit=25&rail=card&status=succeeded", 0, "listing"},
		{"include=status_counts", "/payments?limit=25&include=status_counts", 0, "listing"},
		{"include=customer,status_counts&status=underpaid", "/payments?limit=25&include=customer,status_counts&status=underpaid", 0, "listing"},
		{"search rare (" + strconv.Itoa(terms.Rare.Payments) + ")", "/search?limit=25&q=" + terms.Rare.Query, 0, "search"},
		{"search mid (" + strconv.Itoa(terms.Mid.Payments) + ")", "/search?limit=25&q=" + terms.Mid.Query, 0, "search"},
		{"search broad (" + strconv.Itoa(terms.Broad.Payments) + ")", "/search?limit=25&q=" + terms.Broad.Query, 0, "search"},
		{"search broad, page 5", "/search?limit=25&q=" + terms.Broad.Query, 1, "search"},
		{"search exact tx hash", "/search?limit=25&q=" + url.QueryEscape(hash), 0, "search"},
		{"search exact email", "/search?limit=25&q=" + url.QueryEscape(email), 0, "search"},
		{"search common word (trail)", "/search?limit=25&q=trail", 0, "search"},
		{"payments q=marzipan", "/payments?limit=25&q=" + terms.Mid.Query, 0, "search"},
	}
}

// exactKeys returns a transaction hash and a customer email of the first
// business, for the exact-match ranking tier.
func exactKeys(t *testing.T, db *store.DB, sum *seed.Summary) (hash, email string) {
	t.Helper()
	ctx := context.Background()
	crypto := payd.RailCrypto
	ps, err := db.ListPayments(ctx, payd.PaymentFilter{BusinessID: sum.Targets.BusinessID, Rail: &crypto,
		Sort: payd.SortCreatedDesc, Limit: 1})
	if err != nil || len(ps) == 0 || ps[0].Method == nil {
		t.Fatalf("no crypto payment to take a hash from: %v", err)
	}
	hash = ps[0].Method.TxHash
	c, err := db.CustomerByID(ctx, sum.Targets.BusinessID, sum.Targets.TopCustomerID)
	if err != nil {
		t.Fatal(err)
	}
	return hash, c.Email
}

// runBench starts the server on db, times every case and returns the
// markdown table and each case's result ids.
func runBench(t *testing.T, db *store.DB, sum *seed.Summary) (string, map[string][]string) {
	t.Helper()
	b := setup(t, db)
	secret, key := payd.NewAPIKey(sum.Targets.BusinessID, payd.KeySecret, payd.ModeLive, nil, b.clock.Now())
	if err := db.CreateAPIKey(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s, %d payments (first business %d)\n\n| case | results | median | p99 |\n| --- | ---: | ---: | ---: |\n",
		db.Dialect(), sum.Payments, sum.Businesses[0].Payments)
	order := map[string][]string{}
	only := os.Getenv("PAYD_BENCH_CASES")
	for _, c := range benchCases(t, db, sum) {
		if only != "" && !strings.Contains(c.name, only) {
			continue
		}
		path := c.path
		if c.walk > 0 {
			// A trial with fewer payments walks proportionally less deep.
			path = walk(t, b, secret, c.path, max(1, c.walk*sum.Payments/1_000_000))
		}
		// One validated request: the response must match the document.
		first := b.do(request{method: "GET", path: path, key: secret})
		if first.status != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, first.status, first.body)
		}
		ids := resultIDs(t, first.body)
		order[c.name] = ids
		med, p99 := timeRequests(t, b, secret, path)
		fmt.Fprintf(&sb, "| %s | %d | %s | %s |\n", c.name, len(ids), ms(med), ms(p99))
		t.Logf("%s: %s: %d results, median %s, p99 %s", db.Dialect(), c.name, len(ids), ms(med), ms(p99))
	}
	return sb.String(), order
}

// walk follows next_cursor through pages pages of 100 and returns the path
// of the page after them, with the case's own limit.
func walk(t *testing.T, b *bundle, key, path string, pages int) string {
	t.Helper()
	big := strings.Replace(path, "limit=25", "limit=100", 1)
	cursor := ""
	for i := range pages {
		p := big
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		body := get(t, b, key, p)
		var page struct {
			HasMore    bool   `json:"has_more"`
			NextCursor string `json:"next_cursor"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		if !page.HasMore {
			t.Fatalf("%s: the list ends after %d pages", path, i+1)
		}
		cursor = page.NextCursor
	}
	return path + "&cursor=" + url.QueryEscape(cursor)
}

// get sends one GET without checking it against the document, for timing.
func get(t *testing.T, b *bundle, key, path string) []byte {
	t.Helper()
	req, err := http.NewRequest("GET", b.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := b.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s %v", path, res.StatusCode, body, err)
	}
	return body
}

// timeRequests sends benchWarm requests, then benchRuns timed ones, one
// after another, and returns the median and 99th percentile.
func timeRequests(t *testing.T, b *bundle, key, path string) (med, p99 time.Duration) {
	t.Helper()
	clk := clock.Real{}
	for range benchWarm {
		get(t, b, key, path)
	}
	took := make([]time.Duration, benchRuns)
	for i := range took {
		start := clk.Now()
		get(t, b, key, path)
		took[i] = clk.Now().Sub(start)
	}
	slices.Sort(took)
	return took[len(took)/2], took[len(took)*99/100]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// resultIDs lists the ids of a list response's objects, in order.
func resultIDs(t *testing.T, body []byte) []string {
	t.Helper()
	var page struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(page.Data))
	for i, d := range page.Data {
		ids[i] = d.ID
	}
	return ids
}

// compareOrders fails when the databases returned different objects or
// orders for a case; the seeded data is the same on both.
func compareOrders(t *testing.T, orders map[string]map[string][]string) {
	t.Helper()
	lite, pg := orders["sqlite"], orders["postgres"]
	if lite == nil || pg == nil {
		return
	}
	same := 0
	for name, ids := range lite {
		if slices.Equal(ids, pg[name]) {
			same++
			continue
		}
		t.Errorf("%s: SQLite and PostgreSQL differ:\n  sqlite   %v\n  postgres %v", name, ids, pg[name])
	}
	t.Logf("result order identical on both databases in %d of %d cases", same, len(lite))
}
