package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"payd/chain/tron/trontest"
	"payd/clock"
	"payd/money"
)

// scrape reads the ops listener's /metrics into families by name.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d", res.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value sums the samples of a family whose labels include want (a
// histogram's count).
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	var sum float64
	for _, m := range f.Metric {
		ok := true
		for k, v := range want {
			found := false
			for _, l := range m.Label {
				found = found || l.GetName() == k && l.GetValue() == v
			}
			ok = ok && found
		}
		if !ok {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestOpsMetrics scrapes --ops-addr's /metrics (CONTRACT.md) before and
// after a payment paid on a followed chain (trontest's, on --dev) with a
// webhook endpoint: every family of docs/operations.md is there and moves
// with the work, and the profiler answers on the ops listener only.
func TestOpsMetrics(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		node := trontest.Start(t, trontest.Options{})
		hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		defer hooks.Close()
		cli(t, dsn, "migrate")
		var biz newBusiness
		if err := json.Unmarshal(cli(t, dsn, "business", "create", "--name", "Shop", "--email", "o@shop.example",
			"--wallet", "generate", "--json"), &biz); err != nil {
			t.Fatal(err)
		}
		ops := freeAddr(t)
		s := startServe(t, dsn, "--dev", "--ops-addr", ops, "--chain", "tron="+node.URL(), "--token",
			"tron:USDT="+node.Token(), "--follow-interval", "100ms", "--confirmations", "tron=1")
		api := apiClient{t: t, base: s.base, key: biz.SecretKey}
		api.call(201, "POST", "/webhooks", map[string]any{"url": hooks.URL + "/hook", "event_types": []string{"*"}})
		before := scrape(t, ops)
		for _, name := range []string{"payd_http_requests_total", "payd_http_request_duration_seconds",
			"payd_db_connections", "payd_db_waits_total", "payd_db_wait_seconds_total", "payd_db_writer_queue",
			"payd_chain_tip_height", "payd_chain_head_height", "payd_chain_lag_blocks", "payd_chain_error",
			"payd_chain_read_age_seconds", "payd_rates_age_seconds", "payd_rate_source_up", "payd_payments",
			"go_goroutines", "process_resident_memory_bytes"} {
			if before[name] == nil {
				t.Errorf("no %s in /metrics", name)
			}
		}
		tip := value(before, "payd_chain_head_height", map[string]string{"network": "tron"})

		pay := api.call(201, "POST", "/payments", map[string]any{"amount": 2500, "currency": "USD"})
		chk := api.call(201, "POST", "/checkouts", map[string]any{"payment_id": pay["id"], "rail": "crypto",
			"asset": "USDT", "network": "tron"})
		crypto := chk["crypto"].(map[string]any)
		amount, err := money.ParseCoinAmount(money.USDT, crypto["amount"].(string))
		if err != nil {
			t.Fatal(err)
		}
		node.Transfer(crypto["address"].(string), amount.Units.Int64())
		node.Mine(1)
		api.waitEvents(pay["id"].(string), "created", "method_selected", "detected", "confirmation", "succeeded")

		var after map[string]*dto.MetricFamily
		for deadline := (clock.Real{}).Now().Add(10 * time.Second); (clock.Real{}).Now().Before(deadline); {
			after = scrape(t, ops)
			if value(after, "payd_webhook_deliveries_total", map[string]string{"outcome": "succeeded"}) >= 5 {
				break
			}
			<-clockAfter(50 * time.Millisecond)
		}
		for _, c := range []struct {
			name   string
			labels map[string]string
			more   float64
		}{
			{"payd_http_requests_total", map[string]string{"route": "POST /api/v1/payments", "code": "201"}, 1},
			{"payd_http_request_duration_seconds", map[string]string{"route": "POST /api/v1/checkouts"}, 1},
			{"payd_checkouts_opened_total", map[string]string{"rail": "crypto", "network": "tron"}, 1},
			{"payd_payments", map[string]string{"status": "succeeded"}, 1},
			{"payd_webhook_deliveries_total", map[string]string{"outcome": "succeeded"}, 5},
			{"payd_webhook_delivery_lag_seconds", nil, 5},
			{"payd_chain_head_height", map[string]string{"network": "tron"}, 1},
		} {
			was := max(value(before, c.name, c.labels), 0)
			if now := value(after, c.name, c.labels); now < was+c.more {
				t.Errorf("%s%v went from %v to %v, want at least %v more", c.name, c.labels, was, now, c.more)
			}
		}
		if tip < 1 {
			t.Errorf("tron's head before the payment: %v", tip)
		}
		res, err := http.Get("http://" + ops + "/debug/pprof/goroutine?debug=1")
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("pprof on the ops listener: %v %v", res, err)
		}
		res.Body.Close()
		public := strings.TrimSuffix(s.base, "/api/v1")
		for _, path := range []string{"/debug/pprof/", "/metrics"} {
			res, err := http.Get(public + path)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s on the public listener: %d, want 404", path, res.StatusCode)
			}
		}
	})
}
