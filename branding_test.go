package payd

import "testing"

// TestCheckAccent covers the accent colour's form and its contrast on the
// checkout page's white (WCAG AA, 4.5:1).
func TestCheckAccent(t *testing.T) {
	if r := Contrast("#000000", "#ffffff"); r < 20.99 || r > 21.01 {
		t.Fatalf("black on white %.3f", r)
	}
	for in, want := range map[string]string{"": "", "#0B5CAD": "#0b5cad", " #767676 ": "#767676", "#7a1f5c": "#7a1f5c"} {
		got, err := CheckAccent(in)
		if err != nil || got != want {
			t.Errorf("CheckAccent(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"#777777", "#ffffff", "#ffcc00", "red", "#fff", "0b5cad", "#0b5cadff", "#0b5cag", "#-b5cad", "#+b5cad"} {
		if _, err := CheckAccent(in); err == nil {
			t.Errorf("CheckAccent(%q) accepted", in)
		}
	}
}
