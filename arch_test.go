package payd

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The architecture of DESIGN.md §9, checked on every go test run (and so by
// .ci/run) instead of by memory. docs/architecture.md explains each rule.

// module is the module path; payd's own packages are module and module/*.
const module = "payd"

// shared are the packages every package may import besides the root: the
// leaves the adapters have in common, which hold no adapter's work (no I/O,
// no storage, no network). A package under one of them (loop/looptest)
// counts as part of it.
var shared = map[string]string{
	"money": "exact amounts, assets and networks",
	"clock": "the one service clock (the clock rule)",
	"loop":  "the background loops' start/stop helper",
	"chain": "what every network adapter under chain/ shares: payment URIs, token contracts",
	"hd": "key and address formats: pure functions of public keys; the API validates " +
		"an attached wallet key with it, the chain adapters derive deposit addresses",
}

// rootImports are the only payd packages the root package may import; the
// standard library is always allowed.
var rootImports = []string{"payd/money", "payd/clock"}

// timeCalls are the functions of package time that read or wait for the
// real time; only clock/ calls them (DESIGN §1.6), so the dev clock moves
// everything that falls due. Tests too take clock.Real{} when they need the
// wall clock.
var timeCalls = []string{"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "Tick", "NewTimer", "NewTicker"}

// sqlImports are the packages that speak SQL; only store/ imports them,
// tests included (store/storetest serves the tests of other packages).
var sqlImports = []string{"database/sql", "modernc.org/sqlite", "github.com/jackc/pgx", "github.com/jackc/pgconn",
	"github.com/lib/pq", "github.com/mattn/go-sqlite3"}

// goFile is one parsed source file of the module.
type goFile struct {
	path string // slash-separated, from the module root
	dir  string // its package directory, "." for the root
	test bool
	fset *token.FileSet
	ast  *ast.File
}

func TestArchitecture(t *testing.T) {
	files := moduleFiles(t, ".")
	if len(files) < 50 {
		t.Fatalf("found only %d Go files: is the test running at the module root?", len(files))
	}
	for _, v := range violations(files) {
		t.Error(v)
	}
}

// violations lists every broken rule as "file:line: rule: what".
func violations(files []goFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, importViolations(f)...)
		out = append(out, timeViolations(f)...)
	}
	return out
}

// moduleFiles parses every .go file under root, skipping hidden
// directories and testdata.
func moduleFiles(t *testing.T, root string) []goFile {
	t.Helper()
	var files []goFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		a, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(p)
		files = append(files, goFile{path: rel, dir: path.Dir(rel), test: strings.HasSuffix(name, "_test.go"), fset: fset, ast: a})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// unit is the part of payd a package directory belongs to: "" for the root,
// "chain/NAME" for a network adapter, else the top directory (store for
// store/storetest, cmd for every command).
func unit(dir string) string {
	if dir == "." {
		return ""
	}
	parts := strings.Split(dir, "/")
	if parts[0] == "chain" && len(parts) > 1 {
		return "chain/" + parts[1]
	}
	return parts[0]
}

// importViolations checks the root rule, the adapter rule and the SQL rule
// on f's imports.
func importViolations(f goFile) []string {
	var out []string
	for _, spec := range f.ast.Imports {
		imp, _ := strconv.Unquote(spec.Path.Value)
		at := fmt.Sprintf("%s:%d", f.path, f.fset.Position(spec.Pos()).Line)
		if msg := importRule(f, imp); msg != "" {
			out = append(out, at+": "+msg)
		}
	}
	return out
}

// importRule names the rule importing imp into f breaks, or "".
func importRule(f goFile, imp string) string {
	u := unit(f.dir)
	if u != "store" && slices.ContainsFunc(sqlImports, func(s string) bool { return imp == s || strings.HasPrefix(imp, s+"/") }) {
		return fmt.Sprintf("the SQL rule: %q is imported outside store/ (SQL lives only in store; tests use store/storetest)", imp)
	}
	if u == "" {
		if isStd(imp) || slices.Contains(rootImports, imp) {
			return ""
		}
		return fmt.Sprintf("the root rule: package payd imports %q; it imports only the standard library, money and clock", imp)
	}
	to, own := strings.CutPrefix(imp, module+"/")
	if !own || f.test || u == "cmd" || unit(to) == u {
		return "" // tests and cmd/payd wire real parts together
	}
	if _, ok := shared[unit(to)]; ok {
		return ""
	}
	return fmt.Sprintf("the adapter rule: %s imports %q; adapters import only payd and the shared packages "+
		"(money, clock, loop, chain, hd), and cmd/payd wires them", u, imp)
}

// isStd reports whether imp is in the standard library: its first element
// has no dot, and it is not payd's own.
func isStd(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".") && first != module
}

// timeViolations checks the clock rule: no call reads or waits for the real
// time outside clock/.
func timeViolations(f goFile) []string {
	if unit(f.dir) == "clock" {
		return nil
	}
	name := ""
	for _, spec := range f.ast.Imports {
		if spec.Path.Value == `"time"` {
			name = "time"
			if spec.Name != nil {
				name = spec.Name.Name
			}
		}
	}
	if name == "" {
		return nil
	}
	var out []string
	ast.Inspect(f.ast, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && slices.Contains(timeCalls, sel.Sel.Name) {
			out = append(out, fmt.Sprintf("%s:%d: the clock rule: time.%s outside clock/; use the injected clock.Clock "+
				"(clock.Real{} where the wall clock is meant)", f.path, f.fset.Position(sel.Pos()).Line, sel.Sel.Name))
		}
		return true
	})
	return out
}
