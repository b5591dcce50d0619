package api

import (
	_ "embed"
	"net/http"
)

// openAPIDocument describes every API route. The API tests validate each
// response they receive against it, so it cannot drift from the code.
//
//go:embed openapi.json
var openAPIDocument []byte

// OpenAPIDocument returns the API's OpenAPI 3 document.
func OpenAPIDocument() []byte { return openAPIDocument }

// getOpenAPI serves GET /openapi.json.
func (s *Server) getOpenAPI(w http.ResponseWriter, r *http.Request) error {
	writeRaw(w, http.StatusOK, "application/json", openAPIDocument)
	return nil
}
