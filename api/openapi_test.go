package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"payd/clock"
	"payd/store/storetest"
)

// TestOpenAPIMatchesRoutes keeps the document and routes.go in step, in
// both modes: every route is documented and every documented operation is
// routed, so a server without --dev lists no /devnet/* path.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	for _, dev := range []bool{true, false} {
		doc, err := openapi3.NewLoader().LoadFromData(OpenAPIDocument(dev))
		if err != nil {
			t.Fatal(err)
		}
		if err := doc.Validate(context.Background()); err != nil {
			t.Fatalf("dev=%v: the document is not valid: %v", dev, err)
		}
		s := &Server{opts: Options{Dev: dev}}
		routed := map[string]bool{}
		for _, rt := range s.routeTable() {
			op := rt.method + " " + rt.path
			routed[op] = true
			item := doc.Paths.Find(rt.path)
			if item == nil || item.GetOperation(rt.method) == nil {
				t.Errorf("dev=%v: %s is routed but not in openapi.json", dev, op)
			}
		}
		for path, item := range doc.Paths.Map() {
			for method := range item.Operations() {
				if !routed[strings.ToUpper(method)+" "+path] {
					t.Errorf("dev=%v: %s %s is in openapi.json but not routed", dev, method, path)
				}
			}
		}
	}
}

// TestOpenAPIWithoutDevDropsOnlyDevComponents checks the production
// document: the components and the tag only /devnet/* paths use (the
// devnet fragment) are gone from it, and everything else is kept.
func TestOpenAPIWithoutDevDropsOnlyDevComponents(t *testing.T) {
	load := func(dev bool) *openapi3.T {
		doc, err := openapi3.NewLoader().LoadFromData(OpenAPIDocument(dev))
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	full, prod := load(true), load(false)
	if full.Components.Schemas["DevnetClock"] == nil {
		t.Fatal("the dev document lacks DevnetClock")
	}
	if prod.Components.Schemas["DevnetClock"] != nil {
		t.Error("the production document still has DevnetClock, which only /devnet/clock uses")
	}
	for _, keep := range []string{"Timestamp", "Error", "Payment", "Event"} {
		if prod.Components.Schemas[keep] == nil {
			t.Errorf("the production document lost %s", keep)
		}
	}
	if prod.Components.Responses["Error"] == nil || prod.Components.SecuritySchemes["bearer"] == nil {
		t.Error("the production document lost a shared component")
	}
	if full.Tags.Get("Devnet") == nil || prod.Tags.Get("Devnet") != nil || prod.Tags.Get("Payments") == nil {
		t.Error("the Devnet tag must be listed only in the dev document, the others in both")
	}
	if n, m := len(prod.Paths.Map()), len(full.Paths.Map()); n >= m {
		t.Errorf("the production document has %d paths, the dev one %d", n, m)
	}
}

// TestOpenAPIServedPerMode checks what GET /openapi.json answers on a real
// server in each mode: the --dev server lists /devnet/*, the other does not.
func TestOpenAPIServedPerMode(t *testing.T) {
	db := storetest.OpenSQLite(t)
	for _, dev := range []bool{true, false} {
		clk := clock.NewOffset()
		o := Options{Store: db, Clock: clk, Log: slog.New(slog.DiscardHandler), Rates: fixedRates{testRates(clk.Now())},
			Counter: NewMemoryCounter(clk), PublicURL: "http://payd.test", Dev: dev}
		if dev {
			o.DevClock = clk
		}
		srv, err := New(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		res, err := http.Get(hs.URL + BasePath + "/openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		hs.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("dev=%v: %d %v", dev, res.StatusCode, err)
		}
		if string(body) != string(OpenAPIDocument(dev)) {
			t.Errorf("dev=%v: the server does not serve its mode's document", dev)
		}
		if lists := strings.Contains(string(body), `"/devnet/clock"`); lists != dev {
			t.Errorf("dev=%v: the served document lists /devnet/clock: %v", dev, lists)
		}
	}
}

// TestOpenAPIErrorCodesMatchStatuses checks every code an operation lists
// under a 4xx status: it is a code errors.go knows, answered with that
// status. (The harness checks the other way: what a test receives is listed.)
func TestOpenAPIErrorCodesMatchStatuses(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPIDocument(true))
	if err != nil {
		t.Fatal(err)
	}
	listed := regexp.MustCompile("`([a-z_]+)`")
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if len(op.Tags) == 0 || op.Summary == "" || op.Description == "" {
				t.Errorf("%s %s needs tags, a summary and a description", method, path)
			}
			for status, ref := range op.Responses.Map() {
				if !strings.HasPrefix(status, "4") {
					continue
				}
				codes := listed.FindAllStringSubmatch(*ref.Value.Description, -1)
				if len(codes) == 0 {
					t.Errorf("%s %s %s lists no error code", method, path, status)
				}
				for _, c := range codes {
					if got := statusByCode[c[1]]; strconv.Itoa(got) != status {
						t.Errorf("%s %s lists %s under %s; errors.go answers it with %d", method, path, c[1], status, got)
					}
				}
			}
		}
	}
}
