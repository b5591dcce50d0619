package api

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"payd"
)

// testCursorKey is a fixed key so that fuzz corpus entries stay valid.
var testCursorKey = bytes.Repeat([]byte{0x5a}, cursorKeyLen)

// testCodec returns a codec with testCursorKey.
func testCodec() cursorCodec { return cursorCodec{key: testCursorKey} }

// TestCursorRoundTrip checks that decode returns what encode was given,
// whatever bytes the values hold.
func TestCursorRoundTrip(t *testing.T) {
	c := testCodec()
	for _, after := range [][]string{
		{"1700000000000000", "pmt_0123456789ABCDEFGHIJKLMN"},
		{"-42", "pmt_x"},
		{""},
		{"a|b", "c\x00d", "日本", strings.Repeat("v", 300)},
		slices.Repeat([]string{"x"}, maxCursorAfter),
	} {
		s := c.encode("biz_a", "payments", "status=pending", after)
		got, err := c.decode(s, "biz_a", "payments", "status=pending")
		if err != nil || !slices.Equal(got, after) {
			t.Errorf("decode(encode(%q)) = %q, %v", after, got, err)
		}
		if strings.ContainsAny(s, "+/=") {
			t.Errorf("cursor %q is not unpadded base64url", s)
		}
	}
}

// TestCursorRefused checks every way a cursor is refused.
func TestCursorRefused(t *testing.T) {
	c := testCodec()
	valid := c.encode("biz_a", "payments", "status=pending", []string{"1700000000000000", "pmt_abc"})
	raw, _ := base64.RawURLEncoding.DecodeString(valid)
	payload := raw[:len(raw)-cursorTagLen]
	other := cursorCodec{key: bytes.Repeat([]byte{1}, cursorKeyLen)}
	tests := []struct {
		name, cursor, list, filters, msg string
	}{
		{"empty", "", "payments", "status=pending", "empty"},
		{"too long", strings.Repeat("A", maxCursorLen+1), "payments", "status=pending", "longer than 1024"},
		{"not base64", "!!!!" + valid[4:], "payments", "status=pending", "malformed"},
		{"padded", valid + "=", "payments", "status=pending", "malformed"},
		{"standard alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(valid) + "+", "payments", "status=pending", "malformed"},
		{"newline inside", valid[:10] + "\n" + valid[10:], "payments", "status=pending", "malformed"},
		{"too short", "AAAA", "payments", "status=pending", "malformed"},
		{"truncated", valid[:len(valid)-3], "payments", "status=pending", ""},
		{"extended", valid + "AAAA", "payments", "status=pending", "not one this server made"},
		{"another key", other.encode("biz_a", "payments", "status=pending", []string{"1", "pmt_abc"}), "payments", "status=pending", "not one this server made"},
		{"bad tag", c.sealRaw(payload, bytes.Repeat([]byte{0}, cursorTagLen)), "payments", "status=pending", "not one this server made"},
		{"another version", c.seal(append([]byte{3}, payload[1:]...)), "payments", "status=pending", "another version"},
		{"no values", c.seal(append(slices.Clone(payload[:2+cursorHashLen+8+cursorHashLen]), 0, 0)), "payments", "status=pending", "malformed"},
		{"short value", c.seal(append(slices.Clone(payload[:2+cursorHashLen+8+cursorHashLen]), 1, 9, 'x')), "payments", "status=pending", "malformed"},
		{"trailing bytes", c.seal(append(slices.Clone(payload), 0)), "payments", "status=pending", "malformed"},
		{"another list", valid, "customers", "status=pending", "another list"},
		{"version 1", c.seal(append([]byte{1}, payload[1:]...)), "payments", "status=pending", "another version"},
		{"list prefix", valid, "payment", "status=pending", "another list"},
		{"other filters", valid, "payments", "status=failed", "other filters"},
		{"no filters", valid, "payments", "", "other filters"},
		{"more filters", valid, "payments", "rail=card&status=pending", "other filters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.decode(tt.cursor, "biz_a", tt.list, tt.filters)
			checkCursorError(t, got, err, tt.msg)
		})
	}
	t.Run("another business", func(t *testing.T) {
		got, err := c.decode(valid, "biz_b", "payments", "status=pending")
		checkCursorError(t, got, err, "another business")
	})
}

// sealRaw encodes payload with a tag of the test's choosing.
func (c cursorCodec) sealRaw(payload, tag []byte) string {
	return base64.RawURLEncoding.EncodeToString(append(slices.Clone(payload), tag...))
}

// checkCursorError checks that a refusal is invalid_request on cursor.
func checkCursorError(t *testing.T, got []string, err error, msg string) {
	t.Helper()
	var pe *payd.Error
	if !errors.As(err, &pe) || pe.Code != payd.ErrInvalidRequest || pe.Field != "cursor" {
		t.Fatalf("decode = %q, %v; want invalid_request on cursor", got, err)
	}
	if !strings.Contains(pe.Message, msg) {
		t.Errorf("decode message %q, want it to contain %q", pe.Message, msg)
	}
}

// TestCursorTamper changes every character of a valid cursor to every other
// base64url character, and cuts and extends it: no change may be accepted.
func TestCursorTamper(t *testing.T) {
	c := testCodec()
	valid := c.encode("biz_a", "payments", "q=ann", []string{"1700000000000000", "pmt_0123456789ABCDEFGHIJKLMN"})
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range len(valid) {
		for _, r := range alphabet {
			if byte(r) == valid[i] {
				continue
			}
			forged := valid[:i] + string(r) + valid[i+1:]
			if got, err := c.decode(forged, "biz_a", "payments", "q=ann"); err == nil {
				t.Fatalf("decode accepted %q (character %d changed): %q", forged, i, got)
			}
		}
		if _, err := c.decode(valid[:i], "biz_a", "payments", "q=ann"); err == nil {
			t.Fatalf("decode accepted the first %d characters", i)
		}
	}
}

// TestCursorMisuse checks that programming mistakes fail loudly rather than
// minting cursors that decode would refuse.
func TestCursorMisuse(t *testing.T) {
	for name, f := range map[string]func(){
		"short key":  func() { cursorCodec{key: []byte("short")}.encode("biz_a", "payments", "", []string{"1"}) },
		"no list":    func() { testCodec().encode("biz_a", "", "", []string{"1"}) },
		"long list":  func() { testCodec().encode("biz_a", strings.Repeat("l", 256), "", []string{"1"}) },
		"no values":  func() { testCodec().encode("biz_a", "payments", "", nil) },
		"too many":   func() { testCodec().encode("biz_a", "payments", "", make([]string, maxCursorAfter+1)) },
		"too long":   func() { testCodec().encode("biz_a", "payments", "", []string{strings.Repeat("v", 800)}) },
		"nil values": func() { testCodec().encode("biz_a", "payments", "", []string{}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("encode did not panic")
				}
			}()
			f()
		})
	}
	_, err := cursorCodec{}.decode("x", "biz_a", "payments", "")
	if err == nil || payd.ErrorCode(err) != payd.ErrInternal {
		t.Errorf("decode without a key = %v, want an internal error", err)
	}
}

// TestCanonicalFilters checks that equal filters give equal strings and
// different filters different ones, and that limit and cursor do not count.
func TestCanonicalFilters(t *testing.T) {
	tests := []struct {
		q    url.Values
		want string
	}{
		{url.Values{}, ""},
		{url.Values{"limit": {"5"}, "cursor": {"abc"}}, ""},
		{url.Values{"status": {}}, ""},
		{url.Values{"b": {"2", "1"}, "a": {"x y"}, "limit": {"5"}}, "a=x+y&b=2&b=1"},
		{url.Values{"a": {"1&b=2"}}, "a=1%26b%3D2"},
		{url.Values{"metadata[k]": {"v"}}, "metadata%5Bk%5D=v"},
		{url.Values{"status": {""}}, "status="},
	}
	for _, tt := range tests {
		if got := canonicalFilters(tt.q); got != tt.want {
			t.Errorf("canonicalFilters(%v) = %q, want %q", tt.q, got, tt.want)
		}
	}
	distinct := []url.Values{
		{"a": {"1&b=2"}}, {"a": {"1"}, "b": {"2"}}, {"a": {"1", "2"}}, {"a": {"2", "1"}}, {"a": {"12"}}, {"a": {""}}, {},
	}
	seen := map[string]url.Values{}
	for _, q := range distinct {
		f := canonicalFilters(q)
		if prev, dup := seen[f]; dup {
			t.Errorf("canonicalFilters(%v) = canonicalFilters(%v) = %q", q, prev, f)
		}
		seen[f] = q
	}
}

// FuzzCursorDecode checks that decode never panics, refuses with the cursor
// error, and accepts only what encode makes: any accepted string must be
// exactly the encoding of the values it decodes to (so a forgery accepted
// would have to be a cursor the server made).
func FuzzCursorDecode(f *testing.F) {
	c := testCodec()
	f.Add(c.encode("biz_a", "payments", "status=pending", []string{"1700000000000000", "pmt_abc"}), "payments", "status=pending")
	f.Add(c.encode("biz_a", "payments", "", []string{"5000", "pmt_x"}), "payments", "")
	f.Add(c.encode("biz_a", "customers", "q=ann", []string{""}), "customers", "q=ann")
	f.Add("AAAA", "payments", "")
	f.Add("", "payments", "")
	f.Fuzz(func(t *testing.T, s, list, filters string) {
		after, err := c.decode(s, "biz_a", list, filters)
		if err != nil {
			var pe *payd.Error
			if !errors.As(err, &pe) || pe.Code != payd.ErrInvalidRequest || pe.Field != "cursor" {
				t.Fatalf("decode(%q) = %v; want invalid_request on cursor", s, err)
			}
			return
		}
		if again := c.encode("biz_a", list, filters, after); again != s {
			t.Fatalf("decode accepted %q, but encode of its values is %q", s, again)
		}
	})
}
