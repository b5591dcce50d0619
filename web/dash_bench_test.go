package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"payd/clock"
)

// TestDashboardBench times the dashboard's first screens with 100,000
// payments in one business on SQLite (docs/benchmarks.md, "Dashboard"):
//
//	PAYD_BENCH_DASHBOARD=1 go test -run TestDashboardBench -v -timeout 20m ./web/
//
// `payd dev seed` fills a fresh SQLite file (PAYD_BENCH_PAYMENTS changes
// the count), `payd serve --dev` serves it, an owner signs in with a
// cookie, and each page is fetched 5 times to warm up and then 200 times
// one after another; a page's time is the whole server response, read to
// its end. The goal: p99 under 100 ms.
func TestDashboardBench(t *testing.T) {
	if os.Getenv("PAYD_BENCH_DASHBOARD") == "" {
		t.Skip("PAYD_BENCH_DASHBOARD is not set")
	}
	n := 100_000
	if v := os.Getenv("PAYD_BENCH_PAYMENTS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	clk := clock.Real{}
	start := clk.Now()
	sd := seedDashboard(t, n)
	s, biz, send := sd.s, sd.biz, sd.send
	t.Logf("seeded %d payments in one business and signed in in %s", sd.payments, clk.Now().Sub(start).Round(time.Second))
	// A payment to open: the newest one.
	var one struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if st, b := s.call("GET", "/payments?limit=1", sd.key, nil); st != http.StatusOK || json.Unmarshal(b, &one) != nil || len(one.Data) != 1 {
		t.Fatalf("newest payment: %d %.300s", st, b)
	}
	base := "/dashboard/" + biz
	pages := []struct{ name, path string }{
		{"home", base + "/"},
		{"payments", base + "/payments"},
		{"payments, status=underpaid", base + "/payments?status=underpaid"},
		{"payments, search", base + "/payments?q=" + sd.mid},
		{"a payment", base + "/payments/" + one.Data[0].ID},
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| page (%d payments) | median | p99 |\n| --- | ---: | ---: |\n", n)
	for _, p := range pages {
		for range 5 {
			if st, b := send("GET", p.path, nil); st != http.StatusOK {
				t.Fatalf("%s: %d %.300s", p.path, st, b)
			}
		}
		took := make([]time.Duration, 200)
		for i := range took {
			at := clk.Now()
			send("GET", p.path, nil)
			took[i] = clk.Now().Sub(at)
		}
		slices.Sort(took)
		med, p99 := took[len(took)/2], took[len(took)*99/100]
		fmt.Fprintf(&table, "| %s | %.1f ms | %.1f ms |\n", p.name, ms(med), ms(p99))
		if p99 > 100*time.Millisecond {
			t.Errorf("%s: p99 %s, over the 100 ms goal", p.name, p99)
		}
	}
	// Other work on the machine shows in p99: say how busy it was.
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(&table, "\nload average (1, 5, 15 min): %s\n", strings.Join(strings.Fields(string(load))[:3], ", "))
	}
	t.Log("\n" + table.String())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// seededDashboard is payd serve --dev on a fresh SQLite file that
// `payd dev seed` filled with n payments in one business, and an owner of
// it signed in: send makes a request with the session's cookie (and the
// same-origin headers of the browser's own pages).
type seededDashboard struct {
	s             *paydServer
	biz, key, mid string // the business, its live secret key, a search term in about 0.01 % of payments
	payments      int
	send          func(method, path string, body io.Reader) (int, []byte)
	header        http.Header // the last answer's
}

func seedDashboard(t *testing.T, n int) *seededDashboard {
	t.Helper()
	s := &paydServer{t: t, bin: paydBinary(t), db: "sqlite:" + filepath.Join(t.TempDir(), "payd.db")}
	out := s.cli("dev", "seed", "--payments", strconv.Itoa(n), "--businesses", "1", "--json")
	var seeded struct {
		Businesses []struct {
			ID        string `json:"business_id"`
			Payments  int    `json:"payments"`
			SecretKey string `json:"secret_key"`
		} `json:"businesses"`
		Terms struct {
			Mid struct {
				Query string `json:"query"`
			} `json:"mid"`
		} `json:"terms"`
	}
	if err := json.Unmarshal(out, &seeded); err != nil || len(seeded.Businesses) != 1 {
		t.Fatalf("dev seed: %v: %.500s", err, out)
	}
	biz := seeded.Businesses[0].ID
	s.serve("--dev")
	s.cliIn(ownerPassword+"\n", "users", "create", "--email", "ada@example.com", "--name", "Ada", "--password-stdin",
		"--business", biz, "--role", "owner")

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var challenge string
	sd := &seededDashboard{s: s, biz: biz, key: seeded.Businesses[0].SecretKey, mid: seeded.Terms.Mid.Query,
		payments: seeded.Businesses[0].Payments}
	sd.send = func(method, path string, body io.Reader) (int, []byte) {
		req, err := http.NewRequest(method, s.origin+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", s.origin)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if challenge != "" {
			req.Header.Set("Service-Challenge", challenge)
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		sd.header = res.Header
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, b
	}
	tok := s.must("POST", "/devnet/challenges", "", map[string]string{"form": "signin"})
	challenge = tok["token"].(string)
	st, b := sd.send("POST", "/api/v1/sessions", strings.NewReader(`{"email":"ada@example.com","password":"`+ownerPassword+`"}`))
	challenge = ""
	if st != http.StatusCreated && st != http.StatusOK {
		t.Fatalf("sign in: %d %s", st, b)
	}
	return sd
}
