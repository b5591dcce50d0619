package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed templates/*.html templates/dash/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pages are the templates that render a whole page on the shared layout.
var pages = []string{"link.html", "payment.html", "notfound.html", "error.html", "devemails.html", "cardgo.html"}

// views holds one template set per page, each with the layout and the
// shared parts.
type views struct {
	sets map[string]*template.Template
}

// staticVersion fingerprints the static files so their URLs change with
// their content and can be cached for long.
var staticVersion = func() string {
	h := sha256.New()
	_ = fs.WalkDir(staticFS, "static", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := staticFS.ReadFile(path)
			h.Write([]byte(path))
			h.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}()

// staticURL is the fingerprinted address of a static file.
func staticURL(name string) string { return "/static/" + name + "?v=" + staticVersion }

func loadViews() (*views, error) {
	funcs := template.FuncMap{"static": staticURL}
	v := &views{sets: map[string]*template.Template{}}
	for _, p := range pages {
		t, err := template.New(p).Funcs(funcs).ParseFS(templateFS,
			"templates/layout.html", "templates/parts.html", "templates/"+p)
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %w", p, err)
		}
		v.sets[p] = t
	}
	// The dashboard's pages: every file of templates/dash is one, on the
	// dashboard's layout and parts (the files whose names start with _).
	dash, err := fs.Glob(templateFS, "templates/dash/*.html")
	if err != nil {
		return nil, err
	}
	for _, file := range dash {
		name := strings.TrimPrefix(file, "templates/")
		if strings.HasPrefix(path.Base(file), "_") {
			continue
		}
		t, err := template.New(path.Base(file)).Funcs(funcs).Funcs(dashFuncs).ParseFS(templateFS, "templates/dash/_*.html", file)
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %w", name, err)
		}
		v.sets[name] = t
	}
	return v, nil
}

// execute runs template tmpl of page name's set.
func (v *views) execute(w io.Writer, name, tmpl string, data any) error {
	t, ok := v.sets[name]
	if !ok {
		return fmt.Errorf("web: no page %s", name)
	}
	return t.ExecuteTemplate(w, tmpl, data)
}

// staticFiles serves the embedded CSS and script. A request carrying the
// current fingerprint is cached for a year.
func staticFiles() http.Handler {
	sub, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/static/", http.FileServer(http.FS(sub)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		if r.URL.Query().Get("v") == staticVersion {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		files.ServeHTTP(w, r)
	})
}
