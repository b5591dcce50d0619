package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSystemdUnit checks deploy/payd.service with systemd's own tools, as
// an operator's systemctl would read it: systemd-analyze verify finds no
// mistake (with ExecStart pointed at a binary that exists here), and the
// hardening leaves an exposure of at most 2.0 ("OK") by systemd-analyze
// security. Skipped where systemd is not installed.
func TestSystemdUnit(t *testing.T) {
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	unit, err := os.ReadFile("../../deploy/payd.service")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "payd.service")
	text := strings.Replace(string(unit), "ExecStart=/usr/local/bin/payd serve", "ExecStart="+bin+" serve", 1)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(tool, "verify", path).CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, err := exec.Command(tool, "security", "--offline=true", path).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Overall exposure level for payd.service: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no exposure level in\n%s", out)
	}
	if level, _ := strconv.ParseFloat(string(m[1]), 64); level > 2.0 {
		t.Fatalf("exposure %.1f, want at most 2.0:\n%s", level, out)
	}
}
