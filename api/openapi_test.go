package api

import (
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestOpenAPIMatchesRoutes keeps the document and routes.go in step: every
// route is documented and every documented operation is routed.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{opts: Options{Dev: true}}
	routed := map[string]bool{}
	for _, rt := range s.routeTable() {
		op := rt.method + " " + rt.path
		routed[op] = true
		item := doc.Paths.Find(rt.path)
		if item == nil || item.GetOperation(rt.method) == nil {
			t.Errorf("%s is routed but not in openapi.json", op)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !routed[strings.ToUpper(method)+" "+path] {
				t.Errorf("%s %s is in openapi.json but not routed", method, path)
			}
		}
	}
}
