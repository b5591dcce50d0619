package rate

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/clock"
)

const (
	coinbaseBTC = "/v2/prices/BTC-USD/spot"
	coinbaseETH = "/v2/prices/ETH-USD/spot"
	coinbaseSOL = "/v2/prices/SOL-USD/spot"
	krakenPath  = "/0/public/Ticker"
	geckoPath   = "/api/v3/simple/price"
	ecbPath     = "/stats/eurofxref/eurofxref-daily.xml"
	bocPath     = "/valet/observations/group/FX_RATES_DAILY/json"
)

// coinbaseReplies are the three recorded spot answers.
func coinbaseReplies() map[string]reply {
	return map[string]reply{
		coinbaseBTC: {file: "coinbase_btc.json"},
		coinbaseETH: {file: "coinbase_eth.json"},
		coinbaseSOL: {file: "coinbase_sol.json"},
	}
}

func TestSourcesParseRecordedAnswers(t *testing.T) {
	tests := []struct {
		name    string
		replies map[string]reply
		source  func(url string) payd.RateSource
		want    map[string]string
		query   string // wanted query of the last request
	}{
		{
			name:    "coinbase",
			replies: coinbaseReplies(),
			source:  func(url string) payd.RateSource { return NewCoinbase(nil, url) },
			want:    map[string]string{"BTC": "66913.625", "ETH": "3093.045", "SOL": "171.325"},
		},
		{
			name:    "kraken",
			replies: map[string]reply{krakenPath: {file: "kraken_ticker.json"}},
			source:  func(url string) payd.RateSource { return NewKraken(nil, url) },
			want: map[string]string{"BTC": "66920.1", "ETH": "3092.79", "SOL": "171.27",
				"USDC": "0.9999", "USDT": "1.0002", "POL": "0.7123", "TRX": "0.12145"},
			query: "pair=XBTUSD,ETHUSD,SOLUSD,USDCUSD,USDTUSD,POLUSD,TRXUSD",
		},
		{
			name:    "coingecko",
			replies: map[string]reply{geckoPath: {file: "coingecko_simple_price.json"}},
			source:  func(url string) payd.RateSource { return NewCoinGecko(nil, url, "") },
			want: map[string]string{"BTC": "66905", "ETH": "3091.12", "SOL": "171.3",
				"USDC": "0.999793", "USDT": "1", "POL": "0.712345", "TRX": "0.1214"},
			query: "ids=bitcoin,ethereum,solana,usd-coin,tether,polygon-ecosystem-token,tron&vs_currencies=usd",
		},
		{
			name:    "ecb",
			replies: map[string]reply{ecbPath: {file: "ecb_daily.xml"}},
			source:  func(url string) payd.RateSource { return NewECB(nil, url, nil) },
			want: map[string]string{"EUR": "1.0866", "GBP": "1.269985974754558204",
				"CAD": "0.735132940937690278", "AUD": "0.668471239618578898"},
		},
		{
			name:    "bankofcanada",
			replies: map[string]reply{bocPath: {file: "boc_fx_rates_daily.json"}},
			source:  func(url string) payd.RateSource { return NewBankOfCanada(nil, url) },
			want: map[string]string{"EUR": "1.086857562408223201", "GBP": "1.269750367107195301",
				"CAD": "0.7342143906020558", "AUD": "0.668869309838472834"},
			query: "recent=1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, seen := serve(t, tt.replies)
			s := tt.source(srv.URL)
			if s.Name() != tt.name {
				t.Errorf("Name() = %q, want %q", s.Name(), tt.name)
			}
			q, err := s.Fetch(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := quoteStrings(q); !maps.Equal(got, tt.want) {
				t.Errorf("quotes = %v\nwant     %v", got, tt.want)
			}
			last := (*seen)[len(*seen)-1]
			if tt.query != "" && last.URL.RawQuery != tt.query {
				t.Errorf("query = %q, want %q", last.URL.RawQuery, tt.query)
			}
			if ua := last.Header.Get("User-Agent"); !strings.HasPrefix(ua, "payd") {
				t.Errorf("User-Agent = %q", ua)
			}
		})
	}
}

func TestCoinGeckoSendsDemoKey(t *testing.T) {
	srv, seen := serve(t, map[string]reply{geckoPath: {file: "coingecko_simple_price.json"}})
	if _, err := NewCoinGecko(srv.Client(), srv.URL, "CG-test").Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := (*seen)[0].Header.Get("x-cg-demo-api-key"); got != "CG-test" {
		t.Errorf("x-cg-demo-api-key = %q", got)
	}
}

func TestSourceErrors(t *testing.T) {
	withCoinbase := func(path string, r reply) map[string]reply {
		m := coinbaseReplies()
		m[path] = r
		return m
	}
	ecbWith := func(old, new string) reply {
		return reply{body: strings.Replace(string(readTestdata(t, "ecb_daily.xml")), old, new, 1)}
	}
	coinbase := func(url string) payd.RateSource { return NewCoinbase(nil, url) }
	kraken := func(url string) payd.RateSource { return NewKraken(nil, url) }
	gecko := func(url string) payd.RateSource { return NewCoinGecko(nil, url, "") }
	ecb := func(url string) payd.RateSource { return NewECB(nil, url, nil) }
	tests := []struct {
		name    string
		source  func(url string) payd.RateSource
		replies map[string]reply
		want    string // in the error, after the source's name
		cat     payd.SourceError
	}{
		{"coinbase 500", coinbase, withCoinbase(coinbaseETH, reply{status: 500, body: "oops"}), "HTTP 500", payd.SourceErrHTTPStatus},
		{"coinbase 404", coinbase, withCoinbase(coinbaseSOL, reply{status: 404, file: "coinbase_not_found.json"}), "Invalid base currency", payd.SourceErrHTTPStatus},
		{"coinbase malformed", coinbase, withCoinbase(coinbaseBTC, reply{body: `{"data":{"amount":`}), "malformed", payd.SourceErrMalformed},
		{"coinbase no data", coinbase, withCoinbase(coinbaseBTC, reply{body: `{}`}), "no data", payd.SourceErrMalformed},
		{"coinbase no amount", coinbase, withCoinbase(coinbaseBTC, reply{body: `{"data":{"base":"BTC","currency":"USD"}}`}), "no amount", payd.SourceErrMalformed},
		{"coinbase other pair", coinbase, withCoinbase(coinbaseBTC, reply{body: `{"data":{"amount":"1","base":"ETH","currency":"USD"}}`}), "answer is for", payd.SourceErrMalformed},
		{"coinbase number", coinbase, withCoinbase(coinbaseBTC, reply{body: `{"data":{"amount":64000,"base":"BTC","currency":"USD"}}`}), "malformed", payd.SourceErrMalformed},
		{"coinbase negative", coinbase, withCoinbase(coinbaseBTC, reply{body: `{"data":{"amount":"-64000","base":"BTC","currency":"USD"}}`}), "not a positive decimal", payd.SourceErrMalformed},
		{"coinbase zero", coinbase, withCoinbase(coinbaseBTC, reply{body: `{"data":{"amount":"0.00","base":"BTC","currency":"USD"}}`}), "not a positive decimal", payd.SourceErrMalformed},
		{"coinbase absurd", coinbase, withCoinbase(coinbaseBTC, reply{body: `{"data":{"amount":"6.40","base":"BTC","currency":"USD"}}`}), "outside", payd.SourceErrImplausible},
		{"kraken 500", kraken, map[string]reply{krakenPath: {status: 502, body: "<html>bad gateway</html>"}}, "HTTP 502", payd.SourceErrHTTPStatus},
		{"kraken error list", kraken, map[string]reply{krakenPath: {file: "kraken_unknown_pair.json"}}, "EQuery:Unknown asset pair", payd.SourceErrRefused},
		{"kraken malformed", kraken, map[string]reply{krakenPath: {body: `{"error":[],"result":`}}, "malformed", payd.SourceErrMalformed},
		{"kraken no result", kraken, map[string]reply{krakenPath: {body: `{"error":[]}`}}, "no result", payd.SourceErrMalformed},
		{"kraken missing SOL", kraken, map[string]reply{krakenPath: {body: `{"error":[],"result":{"XXBTZUSD":{"c":["66920.1","1"]},"XETHZUSD":{"c":["3092.79","1"]}}}`}}, "no SOLUSD market", payd.SourceErrMalformed},
		{"kraken empty c", kraken, map[string]reply{krakenPath: {body: `{"error":[],"result":{"XXBTZUSD":{"c":[]},"XETHZUSD":{"c":["3092.79","1"]},"SOLUSD":{"c":["171","1"]}}}`}}, "no last trade", payd.SourceErrMalformed},
		{"kraken zero", kraken, map[string]reply{krakenPath: {body: `{"error":[],"result":{"XXBTZUSD":{"c":["0.00000","1"]},"XETHZUSD":{"c":["3092.79","1"]},"SOLUSD":{"c":["171","1"]}}}`}}, "not a positive decimal", payd.SourceErrMalformed},
		{"kraken absurd", kraken, map[string]reply{krakenPath: {body: `{"error":[],"result":{"XXBTZUSD":{"c":["66920.1","1"]},"XETHZUSD":{"c":["3.09279","1"]},"SOLUSD":{"c":["171","1"]}}}`}}, "ETH at 3.09279", payd.SourceErrImplausible},
		{"coingecko 429", gecko, map[string]reply{geckoPath: {status: 429, file: "coingecko_rate_limited.json"}}, "HTTP 429", payd.SourceErrHTTPStatus},
		{"coingecko malformed", gecko, map[string]reply{geckoPath: {body: `[1,2]`}}, "malformed", payd.SourceErrMalformed},
		{"coingecko missing", gecko, map[string]reply{geckoPath: {body: `{"bitcoin":{"usd":66905},"ethereum":{"usd":3091.12}}`}}, "no usd price for solana", payd.SourceErrMalformed},
		{"coingecko null", gecko, map[string]reply{geckoPath: {body: `{"bitcoin":{"usd":null},"ethereum":{"usd":3091.12},"solana":{"usd":171}}`}}, "bitcoin price", payd.SourceErrMalformed},
		{"coingecko negative", gecko, map[string]reply{geckoPath: {body: `{"bitcoin":{"usd":-66905},"ethereum":{"usd":3091.12},"solana":{"usd":171}}`}}, "not a positive decimal", payd.SourceErrMalformed},
		{"coingecko absurd", gecko, map[string]reply{geckoPath: {body: `{"bitcoin":{"usd":6.69e9},"ethereum":{"usd":3091.12},"solana":{"usd":171}}`}}, "outside", payd.SourceErrImplausible},
		{"ecb 500", ecb, map[string]reply{ecbPath: {status: 500}}, "HTTP 500", payd.SourceErrHTTPStatus},
		{"ecb malformed", ecb, map[string]reply{ecbPath: {body: `<gesmes:Envelope><Cube>`}}, "malformed", payd.SourceErrMalformed},
		{"ecb html", ecb, map[string]reply{ecbPath: {body: `<html><body>maintenance</body></html>`}}, "malformed", payd.SourceErrMalformed},
		{"ecb no USD", ecb, map[string]reply{ecbPath: ecbWith("currency='USD'", "currency='XUS'")}, "no USD rate", payd.SourceErrMalformed},
		{"ecb no CAD", ecb, map[string]reply{ecbPath: ecbWith("<Cube currency='CAD' rate='1.4781'/>", "")}, "no CAD rate", payd.SourceErrMalformed},
		{"ecb twice", ecb, map[string]reply{ecbPath: ecbWith("currency='JPY'", "currency='GBP'")}, "listed twice", payd.SourceErrMalformed},
		{"ecb zero", ecb, map[string]reply{ecbPath: ecbWith("rate='0.85560'", "rate='0'")}, "not a positive decimal", payd.SourceErrMalformed},
		{"ecb absurd", ecb, map[string]reply{ecbPath: ecbWith("rate='1.4781'", "rate='1478.1'")}, "CAD at", payd.SourceErrImplausible},
		{"ecb bad date", ecb, map[string]reply{ecbPath: ecbWith("2024-05-17", "17/05/2024")}, "reference date", payd.SourceErrMalformed},
		{"ecb two days", ecb, map[string]reply{ecbPath: ecbWith("<Cube time='2024-05-17'>", "<Cube time='2024-05-16'></Cube><Cube time='2024-05-17'>")}, "exactly one day", payd.SourceErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, tt.replies)
			s := tt.source(srv.URL)
			q, err := s.Fetch(context.Background())
			if err == nil {
				t.Fatalf("Fetch = %v, want an error", quoteStrings(q))
			}
			if !strings.HasPrefix(err.Error(), "rate: "+s.Name()+":") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to name %s and say %q", err, s.Name(), tt.want)
			}
			// A snapshot keeps the category only, never upstream text.
			cat, status := categorize(err)
			wantStatus := 0
			if tt.cat == payd.SourceErrHTTPStatus {
				wantStatus = tt.replies[firstFailing(tt.replies)].status
			}
			if cat != tt.cat || status != wantStatus {
				t.Errorf("category %s %d, want %s %d", cat, status, tt.cat, wantStatus)
			}
		})
	}
}

func TestECBRefusesAnOldFile(t *testing.T) {
	srv, _ := serve(t, map[string]reply{ecbPath: {file: "ecb_daily.xml"}})
	clk := clock.NewFake(fileDay)
	e := NewECB(nil, srv.URL, clk)
	if _, err := e.Fetch(context.Background()); err != nil {
		t.Fatalf("same day: %v", err)
	}
	clk.Advance(ECBMaxAge)
	if _, err := e.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "old") {
		t.Errorf("a week later: err = %v, want a refusal", err)
	}
}

func TestSourcesGiveUpWithTheContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // a service that never answers
	}))
	t.Cleanup(srv.Close)
	for _, s := range []payd.RateSource{
		NewCoinbase(nil, srv.URL), NewKraken(nil, srv.URL), NewCoinGecko(nil, srv.URL, ""), NewECB(nil, srv.URL, nil),
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err := s.Fetch(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), s.Name()) {
			t.Errorf("%s: err = %v, want a deadline error naming the source", s.Name(), err)
		}
	}
}

func TestGetRefusesHugeAnswers(t *testing.T) {
	big := strings.Repeat(" ", maxBody+1)
	srv, _ := serve(t, map[string]reply{krakenPath: {body: big}})
	_, err := NewKraken(nil, srv.URL).Fetch(context.Background())
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("err = %v", err)
	}
}

func TestParseDecimal(t *testing.T) {
	tests := []struct{ in, want string }{
		{"64000", "64000"},
		{"3091.12", "3091.12"},
		{"1.2e-5", "0.000012"},
		{"1.5E+3", "1500"},
		{"6.69e9", "6690000000"},
		{"1e-18", "0.000000000000000001"},
		{"1e-19", ""},
		{"-1", ""},
		{"1e99999999", ""},
		{"NaN", ""},
		{"", ""},
		{"0x10", ""},
	}
	for _, tt := range tests {
		r, err := parseDecimal(tt.in)
		got := r.String()
		if err != nil {
			got = ""
		}
		if got != tt.want {
			t.Errorf("parseDecimal(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestStatic(t *testing.T) {
	q := DevQuotes()
	s := NewStatic(q)
	q.Coins["BTC"] = q.Coins["ETH"] // the source must have kept its own copy
	got, err := s.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"BTC": "64000", "ETH": "3200", "SOL": "150", "USDC": "1", "USDT": "1", "POL": "0.4", "TRX": "0.12",
		"USD": "1", "EUR": "1.08", "GBP": "1.27", "CAD": "0.73", "AUD": "0.66"}
	if !maps.Equal(quoteStrings(got), want) {
		t.Errorf("Fetch = %v", quoteStrings(got))
	}
	s.Set(quotes(t, map[string]string{"BTC": "0.5"}))
	if _, err := s.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "rate: static: BTC") {
		t.Errorf("absurd table: err = %v", err)
	}
}

// firstFailing is the path of the reply that is not a 200.
func firstFailing(replies map[string]reply) string {
	for path, r := range replies {
		if r.status != 0 && r.status != 200 {
			return path
		}
	}
	return ""
}

func TestTransportErrorsAreCategorized(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := NewKraken(nil, url).Fetch(context.Background())
	if cat, _ := categorize(err); cat != payd.SourceErrUnreachable {
		t.Errorf("closed server: %s (%v)", cat, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	_, err = NewKraken(nil, url).Fetch(ctx)
	if cat, _ := categorize(err); cat != payd.SourceErrTimeout {
		t.Errorf("deadline: %s (%v)", cat, err)
	}
	if cat, _ := categorize(errors.New("something a source written elsewhere said")); cat != payd.SourceErrOther {
		t.Errorf("plain error: %s", cat)
	}
}
