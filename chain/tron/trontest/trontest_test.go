package trontest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"payd/chain/tron/trontest"
)

// shape collects the paths of a JSON value with their kinds:
// "block_header.raw_data.number:number", "[].log.[].topics.[]:string".
func shape(v any, path string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		out[path+":object"] = true
		for k, e := range x {
			shape(e, path+"."+k, out)
		}
	case []any:
		out[path+":array"] = true
		for _, e := range x {
			shape(e, path+".[]", out)
		}
	case string:
		out[path+":string"] = true
	case json.Number:
		out[path+":number"] = true
	case bool:
		out[path+":bool"] = true
	case nil:
		out[path+":null"] = true
	}
}

// decode reads JSON with numbers kept as json.Number.
func decode(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return v
}

// fixtureShapes are the paths of every fixture whose name starts with
// prefix.
func fixtureShapes(t *testing.T, prefix string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", prefix+"*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture %s*.json: %v", prefix, err)
	}
	out := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		shape(decode(t, data), "", out)
	}
	return out
}

// post asks the server.
func post(t *testing.T, s *trontest.Server, path, body string) []byte {
	t.Helper()
	res, err := http.Post(s.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d, %v", path, res.StatusCode, err)
	}
	return data
}

// TestAnswersMatchFixtures checks that every field the server writes, at
// its place and of its kind, is in the recorded answers of its endpoint
// (testdata/NOTE.md), and that the fields the adapter reads are in both.
func TestAnswersMatchFixtures(t *testing.T) {
	s := trontest.Start(t, trontest.Options{Genesis: trontest.MainnetGenesis})
	other := trontest.NewAddress("other token")
	to := trontest.NewAddress("deposit")
	s.Transfer(to, 20_000_000)
	s.Send(true, trontest.Log{From: to, To: to, Amount: big.NewInt(1)})
	s.Send(false, trontest.Log{Contract: other, From: to, To: to, Amount: big.NewInt(5)})
	s.Mine(2)
	tx := s.Transfer(to, 1)
	s.Mine(1)
	cases := []struct {
		fixture, path, body string
		reads               []string
	}{
		{"getblock", trontest.GetBlock, `{"detail":false}`, []string{".blockID:string", ".block_header.raw_data.number:number",
			".block_header.raw_data.parentHash:string"}},
		{"getblock", trontest.GetBlock, `{"id_or_num":"0","detail":false}`, []string{".blockID:string"}},
		{"getblock", trontest.GetBlock, `{"id_or_num":"2","detail":true}`, []string{".blockID:string",
			".block_header.raw_data.timestamp:number", ".transactions.[].txID:string"}},
		{"getblock", trontest.GetBlock, `{"id_or_num":"99","detail":false}`, nil},
		{"gettransactioninfobyblocknum", trontest.InfosByBlockNum, `{"num":2}`, []string{".[].id:string",
			".[].blockNumber:number", ".[].blockTimeStamp:number", ".[].result:string", ".[].receipt.result:string", ".[].log.[].address:string",
			".[].log.[].topics.[]:string", ".[].log.[].data:string"}},
		{"gettransactioninfobyblocknum", trontest.InfosByBlockNum, `{"num":3}`, nil},
		{"gettransactioninfobyid", trontest.InfoByID, `{"value":"` + tx + `"}`, []string{".id:string", ".blockNumber:number"}},
		{"gettransactioninfobyid", trontest.InfoByID, `{"value":"` + strings.Repeat("0", 64) + `"}`, nil},
		{"triggerconstantcontract", trontest.ConstantContract, `{"owner_address":"410000000000000000000000000000000000000000",` +
			`"contract_address":"41` + s.TokenHex() + `","function_selector":"decimals()","parameter":""}`,
			[]string{".result.result:bool", ".constant_result.[]:string"}},
		{"triggerconstantcontract", trontest.ConstantContract, `{"contract_address":"41aa","function_selector":"decimals()"}`,
			[]string{".result.code:string"}},
		{"getchainparameters", trontest.ChainParameters, `{}`, []string{".chainParameter.[].key:string",
			".chainParameter.[].value:number"}},
	}
	for _, c := range cases {
		want := fixtureShapes(t, c.fixture)
		got := map[string]bool{}
		shape(decode(t, post(t, s, c.path, c.body)), "", got)
		var extra []string
		for p := range got {
			if !want[p] {
				extra = append(extra, p)
			}
		}
		sort.Strings(extra)
		if len(extra) > 0 {
			t.Errorf("%s %s: fields no recorded answer has: %v", c.path, c.body, extra)
		}
		for _, p := range c.reads {
			if !got[p] || !want[p] {
				t.Errorf("%s %s: %s is read by the adapter: in the answer %v, in the fixtures %v", c.path, c.body, p, got[p], want[p])
			}
		}
	}
}

// TestScripting checks the chain's scripting: mining, forks, drops, the
// injected failures and the call counts.
func TestScripting(t *testing.T) {
	s := trontest.Start(t, trontest.Options{})
	if s.Tip() != 1 || s.BlockID(0) != trontest.NileGenesis {
		t.Fatalf("start: tip %d, genesis %s", s.Tip(), s.BlockID(0))
	}
	to := trontest.NewAddress("deposit")
	tx := s.Transfer(to, 5)
	s.Mine(2)
	old := s.BlockID(2)
	s.Fork(2)
	if s.Tip() != 1 {
		t.Fatalf("tip after Fork(2) = %d", s.Tip())
	}
	s.Mine(3)
	if s.BlockID(2) == old || s.Tip() != 4 {
		t.Fatalf("the new branch reuses %s, tip %d", old, s.Tip())
	}
	if !strings.Contains(string(post(t, s, trontest.InfoByID, `{"value":"`+tx+`"}`)), `"blockNumber":2`) {
		t.Fatal("the forked transfer is not mined again on the new branch")
	}
	tx2 := s.Transfer(to, 6)
	s.Drop(tx2)
	s.Mine(1)
	if string(bytes.TrimSpace(post(t, s, trontest.InfoByID, `{"value":"`+tx2+`"}`))) != "{}" {
		t.Fatal("a dropped transaction was mined")
	}
	s.Fail429(1, "7")
	res, err := http.Post(s.URL()+trontest.GetBlock, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "7" {
		t.Fatalf("Fail429: HTTP %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if got := s.Calls(trontest.InfoByID); got != 2 {
		t.Fatalf("Calls(InfoByID) = %d", got)
	}

	// TronGrid's rate limits, as its docs show them.
	for _, c := range trontest.RateLimits {
		recorded, err := os.ReadFile(filepath.Join("..", "testdata", c.Fixture))
		if err != nil || string(bytes.TrimSpace(recorded)) != c.Body {
			t.Fatalf("%s differs from trontest's body %s (%v)", c.Fixture, c.Body, err)
		}
		s.Refuse(1, c.Status, c.Body)
		res, err := http.Post(s.URL()+trontest.GetBlock, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.Status || string(got) != c.Body {
			t.Fatalf("Refuse(%d): HTTP %d %s", c.Status, res.StatusCode, got)
		}
	}
	if !strings.Contains(string(post(t, s, trontest.GetBlock, "{}")), "blockID") {
		t.Fatal("a refusal outlived its count")
	}

	// Two servers scripted alike share their blocks until one diverges;
	// Balance routes each request to one of them.
	a, b := trontest.Start(t, trontest.Options{}), trontest.Start(t, trontest.Options{})
	a.Mine(1)
	b.Mine(1)
	if a.BlockID(2) != b.BlockID(2) {
		t.Fatal("servers scripted alike differ")
	}
	b.Diverge("b")
	txA, txB := a.Transfer(to, 1), b.Transfer(to, 1)
	a.Mine(1)
	b.Mine(1)
	if txA == txB || a.BlockID(3) == b.BlockID(3) {
		t.Fatal("Diverge did not make other ids")
	}
	url := trontest.Balance(t, func(path string, _ []byte) *trontest.Server {
		if path == trontest.InfosByBlockNum {
			return b
		}
		return a
	})
	for path, want := range map[string]string{trontest.GetBlock: a.BlockID(3), trontest.InfosByBlockNum: txB} {
		res, err := http.Post(url+path, "application/json", strings.NewReader(`{"id_or_num":"3","num":3}`))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(got), want) {
			t.Fatalf("Balance %s: %s, want %s", path, got, want)
		}
	}
}
