package api

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"sort"
)

// openAPIFiles hold the API's OpenAPI document: openapi.json has the info,
// the shared components and the common routes; each file under openapi/ is
// a fragment for one resource ({"paths": …, "components": …}) merged into it.
// The API tests validate each response they receive against the merged
// document, so it cannot drift from the code.
//
//go:embed openapi.json openapi/*.json
var openAPIFiles embed.FS

// devFragment is the part of the document only a --dev server serves: the
// /devnet/* paths, the schemas only they use and their tag.
const devFragment = "openapi/devnet.json"

// The merged documents, built once at start: the development one of every
// fragment, the production one of every fragment but devFragment.
var (
	openAPIDev  = mustMergeOpenAPI(openAPIFiles, true)
	openAPIProd = mustMergeOpenAPI(openAPIFiles, false)
)

// OpenAPIDocument returns the API's OpenAPI 3 document for a server in the
// given mode: without dev, devFragment is left out, so the document lists
// exactly what is served.
func OpenAPIDocument(dev bool) []byte {
	if dev {
		return openAPIDev
	}
	return openAPIProd
}

// getOpenAPI serves GET /openapi.json.
func (s *Server) getOpenAPI(w http.ResponseWriter, r *http.Request) error {
	writeRaw(w, http.StatusOK, "application/json", OpenAPIDocument(s.opts.Dev))
	return nil
}

// mustMergeOpenAPI merges the fragments into the base document in file-name
// order, devFragment only when dev. A fragment's tags are added to the
// document's list; anything else a fragment defines that is already defined
// is a mistake in the source, so it panics at start (and in every test)
// rather than letting one definition silently win.
func mustMergeOpenAPI(fsys fs.FS, dev bool) []byte {
	doc, err := readJSONObject(fsys, "openapi.json")
	if err != nil {
		panic(err)
	}
	names, err := fs.Glob(fsys, "openapi/*.json")
	if err != nil {
		panic(err)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == devFragment && !dev {
			continue
		}
		frag, err := readJSONObject(fsys, name)
		if err != nil {
			panic(err)
		}
		if tags, ok := frag["tags"].([]any); ok {
			doc["tags"] = append(doc["tags"].([]any), tags...)
			delete(frag, "tags")
		}
		if err := mergeJSON(doc, frag, path.Base(name)); err != nil {
			panic(err)
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return b
}

func readJSONObject(fsys fs.FS, name string) (map[string]any, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("api: %s: %w", name, err)
	}
	return v, nil
}

// mergeJSON adds src's members to dst, descending into objects both hold.
func mergeJSON(dst, src map[string]any, at string) error {
	for k, sv := range src {
		dv, ok := dst[k]
		if !ok {
			dst[k] = sv
			continue
		}
		dm, dok := dv.(map[string]any)
		sm, sok := sv.(map[string]any)
		if !dok || !sok {
			return fmt.Errorf("api: OpenAPI fragment %s redefines %s", at, k)
		}
		if err := mergeJSON(dm, sm, at+"/"+k); err != nil {
			return err
		}
	}
	return nil
}
