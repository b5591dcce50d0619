package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"payd"
	"payd/store/storetest"
)

// runOut runs payd with no PAYD_* variables and returns its error, stdout
// and stderr.
func runOut(args ...string) (string, string, error) {
	var out, errb bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, &out, &errb)
	return out.String(), errb.String(), err
}

// TestHelpSucceeds asks every command for --help: it prints the command's
// flags and succeeds, without "flag: help requested".
func TestHelpSucceeds(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--help"}, {"migrate", "-h"}, {"business", "create", "--help"}, {"business", "--help"},
		{"keys", "create", "--help"}, {"keys", "--help"}, {"pause", "--help"}, {"resume", "--help"},
		{"dev", "seed", "--help"}, {"link", "disable", "--help"}, {"devnet", "--help"}, {"devnet", "mine", "--help"},
		{"business", "suspend", "--help"}, {"--help"},
	} {
		out, errOut, err := runOut(args...)
		if err != nil || strings.Contains(out+errOut, "help requested") || out+errOut == "" {
			t.Errorf("payd %v: %v\n%s%s", args, err, out, errOut)
		}
		var b bytes.Buffer
		if code := exitStatus(err, &b); code != 0 || b.Len() > 0 {
			t.Errorf("payd %v exits %d: %s", args, code, b.String())
		}
	}
}

// TestResumeHelpListsItsFlags shows resume's own flags: it takes no
// --reason and has no --list.
func TestResumeHelpListsItsFlags(t *testing.T) {
	_, resume, _ := runOut("resume", "--help")
	_, pause, _ := runOut("pause", "--help")
	if strings.Contains(resume, "-reason") || strings.Contains(resume, "-list") || !strings.Contains(resume, "-database") {
		t.Errorf("resume --help:\n%s", resume)
	}
	if !strings.Contains(pause, "-reason") || !strings.Contains(pause, "-list") {
		t.Errorf("pause --help:\n%s", pause)
	}
	if _, _, err := runOut("resume", "checkouts", "--reason", "x"); !errors.As(err, new(usageError)) {
		t.Errorf("resume --reason: %v", err)
	}
}

// TestErrorPrefixedOnce prints "payd: " once before an error, a payd.Error
// (which says "payd: " itself) too, and exits 1, or 2 for a usage error.
func TestErrorPrefixedOnce(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
		code int
	}{
		{payd.Errorf(payd.ErrNotFound, "no such business"), "payd: not_found: no such business\n", 1},
		{errors.New("disk full"), "payd: disk full\n", 1},
		{usagef("unknown command %q", "x"), "payd: unknown command \"x\"\n", 2},
	} {
		var b bytes.Buffer
		if code := exitStatus(c.err, &b); code != c.code || b.String() != c.want {
			t.Errorf("exitStatus(%v) = %d %q, want %d %q", c.err, code, b.String(), c.code, c.want)
		}
	}
	dsn := storetest.SQLiteDSN(t)
	cli(t, dsn, "migrate")
	_, _, err := runOut("business", "suspend", "--business", "biz_nope", "--database", dsn)
	var b bytes.Buffer
	if exitStatus(err, &b); strings.Count(b.String(), "payd:") != 1 {
		t.Errorf("a store error prints %q", b.String())
	}
}

// TestPauseListSaysNothingIsPaused answers an empty list in words.
func TestPauseListSaysNothingIsPaused(t *testing.T) {
	dsn := storetest.SQLiteDSN(t)
	cli(t, dsn, "migrate")
	if got := string(cli(t, dsn, "pause", "--list")); got != "nothing is paused\n" {
		t.Fatalf("pause --list = %q", got)
	}
	cli(t, dsn, "pause", "card")
	if got := string(cli(t, dsn, "pause", "--list")); !strings.HasPrefix(got, "card\tsince ") {
		t.Fatalf("pause --list = %q", got)
	}
}

// TestCommandsNeedAnExistingDatabase runs each command that works on an
// existing database against an SQLite file that does not exist: each
// refuses, names the file and creates nothing. serve, migrate and dev seed
// make a new database; that is their purpose.
func TestCommandsNeedAnExistingDatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "payd.db")
	for _, args := range [][]string{
		{"pause", "checkouts"}, {"resume", "checkouts"}, {"pause", "--list"},
		{"business", "create", "--name", "A", "--email", "a@example.com"},
		{"business", "suspend", "--business", "biz_x"}, {"business", "reinstate", "--business", "biz_x"},
		{"keys", "create", "--business", "biz_x", "--permissions", "payments:read"},
		{"keys", "revoke", "--business", "biz_x", "--id", "key_x"},
		{"link", "disable", "--link", "lnk_x"},
	} {
		out, _, err := runOut(append(args, "--database", "sqlite:"+path)...)
		if err == nil || !strings.Contains(err.Error(), path+" does not exist") || out != "" {
			t.Errorf("payd %v: %v, printed %q", args, err, out)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("payd %v created the database", args)
		}
	}
	if out := string(cli(t, "sqlite:"+path, "migrate")); !strings.Contains(out, "migrated") {
		t.Fatalf("migrate: %q", out)
	}
	if got := string(cli(t, "sqlite:"+path, "pause", "checkouts")); got != "paused checkouts\n" {
		t.Fatalf("pause after migrate: %q", got)
	}
	seeded := filepath.Join(dir, "seeded.db")
	if _, errOut, err := runOut("dev", "seed", "--payments", "0", "--businesses", "1", "--database", "sqlite:"+seeded); err != nil {
		t.Fatalf("dev seed on a new database: %v\n%s", err, errOut)
	}
}

// TestMigratePrintsKeywordDSNRedacted takes a keyword-form DSN for
// PostgreSQL, not for a file named after it, and never prints its
// password.
func TestMigratePrintsKeywordDSNRedacted(t *testing.T) {
	kw := storetest.PostgresKeywordDSN(t) + " password=s3cret-pw"
	t.Chdir(t.TempDir())
	out, errOut, err := runOut("migrate", "--database", kw)
	if err != nil {
		t.Fatalf("migrate: %v\n%s", err, errOut)
	}
	if strings.Contains(out+errOut, "s3cret-pw") || !strings.Contains(out, "password=xxxxx") {
		t.Fatalf("migrate printed %q %q", out, errOut)
	}
	if left, _ := os.ReadDir("."); len(left) > 0 {
		t.Fatalf("migrate made the file %q", left[0].Name())
	}
}
