package totp_test

import (
	"bytes"
	"encoding/base32"
	"encoding/base64"
	"image/png"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	qrcode "github.com/skip2/go-qrcode"

	"payd"
	"payd/totp"
)

// rfcSecret is the SHA-1 seed of RFC 6238 appendix B, "12345678901234567890".
var rfcSecret = base32.StdEncoding.EncodeToString([]byte("12345678901234567890"))

// rfcVectors are RFC 6238 appendix B's SHA-1 rows: Unix time, 8-digit code.
var rfcVectors = []struct {
	unix int64
	code string
}{
	{59, "94287082"},
	{1111111109, "07081804"},
	{1111111111, "14050471"},
	{1234567890, "89005924"},
	{2000000000, "69279037"},
	{20000000000, "65353130"},
}

func TestRFC6238Vectors(t *testing.T) {
	for _, v := range rfcVectors {
		now := time.Unix(v.unix, 0).UTC()
		// The library computes the RFC's 8-digit codes for the steps Verify
		// uses, so Verify's counter and HMAC are the RFC's.
		got8, err := hotp.GenerateCodeCustom(rfcSecret, uint64(totp.Step(now)), hotp.ValidateOpts{Digits: otp.DigitsEight, Algorithm: otp.AlgorithmSHA1})
		if err != nil || got8 != v.code {
			t.Errorf("%d: 8-digit code %q (%v), want %q", v.unix, got8, err, v.code)
		}
		// A 6-digit code is the last 6 digits of the 8-digit one.
		step, err := totp.Verify(rfcSecret, v.code[2:], now, 0)
		if err != nil || step != v.unix/30 {
			t.Errorf("%d: Verify(%s) = %d, %v; want step %d", v.unix, v.code[2:], step, err, v.unix/30)
		}
	}
}

// code6 is the 6-digit code of secret at step s.
func code6(t *testing.T, secret string, s int64) string {
	t.Helper()
	c, err := hotp.GenerateCodeCustom(secret, uint64(s), hotp.ValidateOpts{Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// t0 starts a step: Unix 1111111110 is 37037037 × 30.
var t0 = time.Unix(1111111110, 0).UTC()

func TestVerifySkew(t *testing.T) {
	now := t0.Add(10 * time.Second)
	s := totp.Step(now)
	for _, d := range []int64{-1, 0, 1} {
		step, err := totp.Verify(rfcSecret, code6(t, rfcSecret, s+d), now, 0)
		if err != nil || step != s+d {
			t.Errorf("step %+d: %d, %v", d, step, err)
		}
	}
	for _, d := range []int64{-3, -2, 2, 3} {
		if _, err := totp.Verify(rfcSecret, code6(t, rfcSecret, s+d), now, 0); payd.ErrorCode(err) != payd.ErrInvalidCode {
			t.Errorf("step %+d accepted or wrong error: %v", d, err)
		}
	}
	// The edges of the window, to the second.
	if _, err := totp.Verify(rfcSecret, code6(t, rfcSecret, s-1), t0.Add(59*time.Second), 0); payd.ErrorCode(err) != payd.ErrInvalidCode {
		t.Errorf("the step before last accepted at the last second of the next: %v", err)
	}
	if _, err := totp.Verify(rfcSecret, code6(t, rfcSecret, s-1), t0.Add(30*time.Second-time.Nanosecond), 0); err != nil {
		t.Errorf("the previous step refused within the step after it: %v", err)
	}
}

func TestVerifyReplay(t *testing.T) {
	now := t0
	s := totp.Step(now)
	c := code6(t, rfcSecret, s)
	step, err := totp.Verify(rfcSecret, c, now, 0)
	if err != nil || step != s {
		t.Fatalf("first use: %d, %v", step, err)
	}
	// The same code again, at once and 20 s later, is refused.
	for _, at := range []time.Time{now, now.Add(20 * time.Second), now.Add(40 * time.Second)} {
		_, err := totp.Verify(rfcSecret, c, at, step)
		if payd.ErrorCode(err) != payd.ErrInvalidCode || !strings.Contains(err.Error(), "used already") {
			t.Errorf("replay at %v: %v", at.Sub(now), err)
		}
	}
	// An older step's code is refused too once a newer one was used.
	if _, err := totp.Verify(rfcSecret, code6(t, rfcSecret, s-1), now, step); payd.ErrorCode(err) != payd.ErrInvalidCode {
		t.Errorf("older step accepted: %v", err)
	}
	// The next step's code is fine, and then the current one is stale.
	next, err := totp.Verify(rfcSecret, code6(t, rfcSecret, s+1), now, step)
	if err != nil || next != s+1 {
		t.Fatalf("next step: %d, %v", next, err)
	}
	if _, err := totp.Verify(rfcSecret, c, now, next); payd.ErrorCode(err) != payd.ErrInvalidCode {
		t.Errorf("current step accepted after the next one: %v", err)
	}
}

func TestVerifyWrongAndMalformed(t *testing.T) {
	good := code6(t, rfcSecret, totp.Step(t0))
	wrong := strconv.Itoa((mustAtoi(t, good)+1)%1000000 + 1000000)[1:]
	cases := []string{
		wrong, "", " ", "12345", "1234567", "12345a", "12 34 5", "１２３４５６", "١٢٣٤٥٦", "123\t456", "123-456",
		"+12345", "-12345", "123456\n", "\x00123456", good + "0", strings.Repeat(" ", 100) + good,
	}
	for _, c := range cases {
		if _, err := totp.Verify(rfcSecret, c, t0, 0); payd.ErrorCode(err) != payd.ErrInvalidCode {
			t.Errorf("Verify(%q): %v, want invalid_code", c, err)
		} else if e := err.(*payd.Error); e.Field != "code" {
			t.Errorf("Verify(%q): field %q", c, e.Field)
		}
	}
	for _, c := range []string{good, " " + good + " ", good[:3] + " " + good[3:], "  " + good[:2] + " " + good[2:4] + " " + good[4:]} {
		if _, err := totp.Verify(rfcSecret, c, t0, 0); err != nil {
			t.Errorf("Verify(%q): %v", c, err)
		}
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestVerifyBadSecret(t *testing.T) {
	_, err := totp.Verify("not base32!", "123456", t0, 0)
	if err == nil || payd.ErrorCode(err) != payd.ErrInternal {
		t.Fatalf("a corrupt secret gave %v, want an internal error", err)
	}
}

func TestStep(t *testing.T) {
	for _, c := range []struct {
		unix, step int64
	}{{0, 0}, {29, 0}, {30, 1}, {59, 1}, {-1, -1}, {-30, -1}, {-31, -2}, {1111111110, 37037037}} {
		if got := totp.Step(time.Unix(c.unix, 999)); got != c.step {
			t.Errorf("Step(%d) = %d, want %d", c.unix, got, c.step)
		}
	}
}

func TestNewSecret(t *testing.T) {
	s, err := totp.NewSecret("payd", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(s.Secret)
	if err != nil || len(raw) != 20 || len(s.Secret) != 32 {
		t.Fatalf("secret %q: %d bytes, %v", s.Secret, len(raw), err)
	}
	u, err := url.Parse(s.URI)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Scheme != "otpauth" || u.Host != "totp" || u.Path != "/payd:ada@example.com" || q.Get("secret") != s.Secret ||
		q.Get("issuer") != "payd" || q.Get("algorithm") != "SHA1" || q.Get("digits") != "6" || q.Get("period") != "30" {
		t.Fatalf("URI %s", s.URI)
	}
	// A code made from the secret verifies.
	if _, err := totp.Verify(s.Secret, code6(t, s.Secret, totp.Step(t0)), t0, 0); err != nil {
		t.Fatal(err)
	}
	other, err := totp.NewSecret("payd", "ada@example.com")
	if err != nil || other.Secret == s.Secret {
		t.Fatalf("two secrets alike: %v", err)
	}
	for _, bad := range [][2]string{{"", "a@example.com"}, {"payd", ""}, {"pa:yd", "a@example.com"}, {"payd", "a:b@example.com"}} {
		if _, err := totp.NewSecret(bad[0], bad[1]); err == nil {
			t.Errorf("NewSecret(%q, %q) accepted", bad[0], bad[1])
		}
	}
}

// TestQRCode checks that the PNG and the SVG draw the modules of the URI's
// QR code, the PNG with whole pixels per module (DEPENDENCIES.md).
func TestQRCode(t *testing.T) {
	s, err := totp.NewSecret("payd", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	q, err := qrcode.New(s.URI, qrcode.Medium)
	if err != nil {
		t.Fatal(err)
	}
	want := q.Bitmap()
	n := len(want)

	b64, ok := strings.CutPrefix(s.QRDataURL, "data:image/png;base64,")
	if !ok {
		t.Fatalf("data URL %.40q", s.QRDataURL)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	px := img.Bounds().Dx() / n
	if img.Bounds().Dx() != px*n || img.Bounds().Dy() != px*n || px < 4 {
		t.Fatalf("PNG %v for %d modules: not whole pixels per module", img.Bounds(), n)
	}
	for y := range n {
		for x := range n {
			// Every pixel of a module has the module's colour.
			for _, d := range [][2]int{{0, 0}, {px - 1, px - 1}, {px / 2, px / 2}} {
				r, _, _, _ := img.At(x*px+d[0], y*px+d[1]).RGBA()
				if dark := r < 0x8000; dark != want[y][x] {
					t.Fatalf("PNG module %d,%d pixel %v: dark %v", x, y, d, dark)
				}
			}
		}
	}

	got := svgModules(t, s.QRSVG, n)
	for y := range n {
		for x := range n {
			if got[y][x] != want[y][x] {
				t.Fatalf("SVG module %d,%d: %v", x, y, got[y][x])
			}
		}
	}
	if strings.Contains(s.QRSVG, "ada@example.com") || strings.Contains(s.QRSVG, s.Secret) {
		t.Fatal("the SVG carries text of the URI")
	}
}

// svgModules reads back the dark modules of qrSVG's path.
func svgModules(t *testing.T, svg string, n int) [][]bool {
	t.Helper()
	if !strings.HasPrefix(svg, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 `+strconv.Itoa(n)+" "+strconv.Itoa(n)+`"`) {
		t.Fatalf("SVG header: %.120s", svg)
	}
	d := regexp.MustCompile(` d="([^"]*)"`).FindStringSubmatch(svg)
	if d == nil {
		t.Fatal("SVG has no path")
	}
	m := make([][]bool, n)
	for i := range m {
		m[i] = make([]bool, n)
	}
	runs := regexp.MustCompile(`^M(\d+) (\d+)h(\d+)v1h-(\d+)z`)
	for rest := d[1]; rest != ""; {
		r := runs.FindStringSubmatch(rest)
		if r == nil || r[3] != r[4] {
			t.Fatalf("SVG path at %.40q", rest)
		}
		x, y, w := atoi(r[1]), atoi(r[2]), atoi(r[3])
		for i := range w {
			m[y][x+i] = true
		}
		rest = rest[len(r[0]):]
	}
	return m
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func TestParseCode(t *testing.T) {
	for in, want := range map[string]string{"123456": "123456", " 123 456 ": "123456", "000000": "000000", "1 2 3 4 5 6": "123456"} {
		if got, err := totp.ParseCode(in); err != nil || got != want {
			t.Errorf("ParseCode(%q) = %q, %v", in, got, err)
		}
	}
}

func FuzzParseCode(f *testing.F) {
	for _, s := range []string{"123456", " 123 456", "12345", "1234567", "12a456", "١٢٣٤٥٦", "", "      "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := totp.ParseCode(s)
		stripped := strings.ReplaceAll(s, " ", "")
		valid := len(s) <= 64 && len(stripped) == 6 && strings.Trim(stripped, "0123456789") == ""
		if err != nil {
			if payd.ErrorCode(err) != payd.ErrInvalidCode {
				t.Fatalf("ParseCode(%q): %v", s, err)
			}
			if valid {
				t.Fatalf("ParseCode(%q) refused a code", s)
			}
			return
		}
		if !valid || got != stripped {
			t.Fatalf("ParseCode(%q) = %q", s, got)
		}
	})
}
