package money

import "testing"

func TestParseRate(t *testing.T) {
	tests := []struct {
		in, want string // want "" means refused
	}{
		{"1", "1"},
		{"0", "0"},
		{"0.92", "0.92"},
		{"1.50", "1.5"},
		{"64123.5", "64123.5"},
		{"0.000000000000000001", "0.000000000000000001"},
		{"999999999999999999.999999999999999999", "999999999999999999.999999999999999999"},
		{"", ""}, {"01", ""}, {"00", ""}, {"1.", ""}, {".1", ""}, {"-1", ""}, {"+1", ""},
		{"1e3", ""}, {" 1", ""}, {"1 ", ""}, {"1/2", ""}, {"0x1", ""}, {"NaN", ""}, {"Inf", ""},
		{"0.0000000000000000001", ""}, {"1000000000000000000", ""}, {"1,5", ""},
	}
	for _, tt := range tests {
		r, err := ParseRate(tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("ParseRate(%q) = %s, want error", tt.in, r)
			}
			continue
		}
		if err != nil || r.String() != tt.want {
			t.Errorf("ParseRate(%q) = %s, %v; want %s", tt.in, r, err, tt.want)
		}
	}
}

func TestRateZero(t *testing.T) {
	var unset Rate
	if !unset.IsZero() || unset.String() != "0" || unset.Rat().Sign() != 0 {
		t.Errorf("zero Rate: IsZero %v String %q", unset.IsZero(), unset.String())
	}
	if !MustRate("0").IsZero() || MustRate("0.01").IsZero() {
		t.Error("IsZero wrong for parsed rates")
	}
	r := MustRate("1.5")
	r.Rat().SetInt64(7) // Rat returns a copy: changing it leaves the rate alone
	if r.String() != "1.5" {
		t.Errorf("Rat leaked the rate's own value: now %s", r)
	}
}

func TestMustRatePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustRate(\"x\") did not panic")
		}
	}()
	MustRate("x")
}
