package store

import (
	"net/url"
	"regexp"
	"strings"
)

// pgKeywords are the libpq connection keywords that mark a DSN in keyword
// form ("host=db dbname=payd password=…"): such a DSN is PostgreSQL's,
// never a file name. Only keywords are matched, so a file path that
// happens to hold "=" stays a path.
var pgKeywords = map[string]bool{
	"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true, "password": true,
	"passfile": true, "sslmode": true, "sslrootcert": true, "sslcert": true, "sslkey": true,
	"connect_timeout": true, "application_name": true, "options": true, "service": true,
	"target_session_attrs": true, "search_path": true,
}

// pgKeyword finds the keywords of a keyword-form DSN: a word, optional
// spaces, then "=", at the start or after a space.
var pgKeyword = regexp.MustCompile(`(?:^|\s)([a-z_]+)\s*=`)

// isPostgres reports whether dsn names a PostgreSQL database: a
// postgres:// or postgresql:// URL, or libpq's keyword form.
func isPostgres(dsn string) bool {
	if isPostgresURL(dsn) {
		return true
	}
	for _, m := range pgKeyword.FindAllStringSubmatch(dsn, -1) {
		if pgKeywords[m[1]] {
			return true
		}
	}
	return false
}

// isPostgresURL reports whether dsn is a PostgreSQL DSN in URL form. Only
// such a DSN is read as a URL: one in keyword form may hold "://" in a value.
func isPostgresURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// SQLitePath returns the file of an SQLite DSN ("sqlite:PATH",
// "sqlite://PATH" or a bare path), and false for a PostgreSQL DSN.
func SQLitePath(dsn string) (string, bool) {
	if p, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		if rest, ok := strings.CutPrefix(p, "//"); ok {
			return rest, true
		}
		return p, true
	}
	if isPostgres(dsn) {
		return "", false
	}
	return dsn, true
}

// SQLiteFile returns the file an SQLite DSN names, and false for a
// PostgreSQL DSN or an SQLite database that is no plain file (":memory:",
// a "file:" URI): the files payd creates, and that CLI commands check
// exist.
func SQLiteFile(dsn string) (string, bool) {
	path, ok := SQLitePath(dsn)
	if !ok || !plainFile(path) {
		return "", false
	}
	return path, true
}

// plainFile reports whether an SQLite path is a file payd may create.
func plainFile(path string) bool {
	return path != "" && path != ":memory:" && !strings.HasPrefix(path, "file:")
}

// pgPassword finds the value of password= in a keyword-form DSN: quoted
// ('…' with \' and \\ escapes) or up to the next space.
var pgPassword = regexp.MustCompile(`((?:^|\s)(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)`)

// RedactDSN hides the password of a DSN before it is printed or logged:
// the password of a URL (postgres://user:…@host, ?password=, and the
// client key's ?sslpassword=) and the password= and sslpassword= of libpq's
// keyword form.
func RedactDSN(dsn string) string {
	if !isPostgres(dsn) {
		return dsn
	}
	if isPostgresURL(dsn) {
		u, err := url.Parse(dsn)
		if err != nil {
			return "postgres://(a DSN that does not parse; not shown)"
		}
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		if q := u.Query(); q.Has("password") || q.Has("sslpassword") {
			for _, k := range []string{"password", "sslpassword"} {
				if q.Has(k) {
					q.Set(k, "xxxxx")
				}
			}
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	return pgPassword.ReplaceAllString(dsn, "${1}xxxxx")
}
