package store

import "testing"

func TestFTSQuery(t *testing.T) {
	for pattern, want := range map[string]string{
		"abc":        `"abc"`,
		" espr":      `" espr"`,
		"abcdef":     `"abcdef"`,
		"abcdefg":    `"abc" AND "bcd" AND "cde" AND "efg"`,
		"abcdefghij": `"abc" AND "cde" AND "efg" AND "hij"`,
		"ünïcödé x":  `"ünï" AND "ïcö" AND "ödé" AND "é x"`,
	} {
		if got := ftsQuery(pattern); got != want {
			t.Errorf("ftsQuery(%q) = %s, want %s", pattern, got, want)
		}
	}
}
