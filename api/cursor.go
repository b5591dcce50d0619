package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"

	"payd"
)

// Cursor layout. A cursor is base64url (no padding) of
//
//	version (1) | SHA-256(business)[:16] | len(list) (1) | list | SHA-256(filters)[:16] | n (1) |
//	n × (uvarint len | value) | tag (16)
//
// A cursor is bound to the business whose list it pages (spec 4.1: a
// foreign cursor is refused), to the list and to its filters. Version 1
// cursors carried no business and are refused as another version's.
//
// where tag is HMAC-SHA256 over a context string and everything before it,
// cut to 16 bytes (128 bits: forging one still means guessing the MAC).
// Cursors are signed, not encrypted: they carry the sort values of the last
// item of a page, which the client has just been shown.
const (
	cursorVersion  = 2
	cursorKeyLen   = 32
	cursorHashLen  = 16
	cursorTagLen   = 16
	maxCursorLen   = 1024 // characters, checked before any decoding work
	maxCursorList  = 255
	maxCursorAfter = 16
	// minCursorBytes is a payload with a one-letter list and one empty value.
	minCursorBytes = 1 + cursorHashLen + 1 + 1 + cursorHashLen + 1 + 1 + cursorTagLen
)

// cursorContext separates cursor tags from anything else the same key might
// ever sign.
var cursorContext = []byte("payd/api cursor\x00")

// cursorCodec makes and checks cursors with a 32-byte HMAC key that every
// replica loads from the database, so that a cursor from one replica works
// on all and survives restarts.
type cursorCodec struct {
	key []byte
}

// encode returns the cursor for the page after the item at position after
// (its sort values, such as [created_at micros, id]) in business's list
// under filters (canonicalFilters of the request). It panics on arguments no request can
// produce: a short key, an empty or long list name, no or too many values,
// or a cursor over maxCursorLen, which decode would then refuse.
func (c cursorCodec) encode(business, list, filters string, after []string) string {
	if len(c.key) < cursorKeyLen {
		panic("api: the cursor key must be 32 bytes")
	}
	if list == "" || len(list) > maxCursorList || len(after) == 0 || len(after) > maxCursorAfter {
		panic(fmt.Sprintf("api: cannot make a cursor for list %q with %d values", list, len(after)))
	}
	b := []byte{cursorVersion}
	b = append(b, cursorHash(business)...)
	b = append(b, byte(len(list)))
	b = append(b, list...)
	b = append(b, cursorHash(filters)...)
	b = append(b, byte(len(after)))
	for _, v := range after {
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	s := c.seal(b)
	if len(s) > maxCursorLen {
		panic(fmt.Sprintf("api: a cursor for list %q is %d characters, over %d", list, len(s), maxCursorLen))
	}
	return s
}

// seal appends the tag to payload and encodes the result.
func (c cursorCodec) seal(payload []byte) string {
	return base64.RawURLEncoding.EncodeToString(append(payload, c.tag(payload)...))
}

// tag is the truncated HMAC of payload.
func (c cursorCodec) tag(payload []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write(cursorContext)
	m.Write(payload)
	return m.Sum(nil)[:cursorTagLen]
}

// cursorHash condenses a business id or canonical filters to a fixed size.
// The tag already makes it unforgeable; the hash only keeps long filters out
// of the cursor and lets decode tell "other filters" or "another business"
// from "tampered".
func cursorHash(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:cursorHashLen]
}

// decode checks that s is a cursor this server made for business's list
// under filters and returns its position. Every way a client can get it wrong is an
// invalid_request error on field "cursor"; only a short key (a server bug)
// is an internal error.
func (c cursorCodec) decode(s, business, list, filters string) ([]string, error) {
	if len(c.key) < cursorKeyLen {
		return nil, errors.New("api: the cursor key must be 32 bytes")
	}
	payload, err := c.open(s)
	if err != nil {
		return nil, err
	}
	if payload[0] != cursorVersion {
		return nil, cursorError("the cursor was made by another version of the API; start again without a cursor")
	}
	biz, gotList, hash, after, ok := parseCursorPayload(payload)
	switch {
	case !ok:
		return nil, cursorError("the cursor is malformed; pass next_cursor exactly as it was returned")
	case !hmac.Equal(biz, cursorHash(business)):
		return nil, cursorError("the cursor belongs to another business's list; use it only with the key that listed it")
	case gotList != list:
		return nil, cursorError("the cursor belongs to another list; use it only with the list that returned it")
	case !hmac.Equal(hash, cursorHash(filters)):
		return nil, cursorError("the cursor was made for other filters; repeat the filters of the request that returned it, or start again without a cursor")
	}
	return after, nil
}

// open decodes s and checks its tag, returning the authenticated payload.
// Nothing in a cursor is looked at before its tag has been checked, except
// its length.
func (c cursorCodec) open(s string) ([]byte, error) {
	switch {
	case s == "":
		return nil, cursorError("the cursor is empty; leave cursor out to get the first page")
	case len(s) > maxCursorLen:
		return nil, cursorError("the cursor is longer than %d characters", maxCursorLen)
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	// The decoder skips newlines and ignores the spare bits of the last
	// character; insisting on the canonical form makes each cursor one string.
	if err != nil || len(b) < minCursorBytes || base64.RawURLEncoding.EncodeToString(b) != s {
		return nil, cursorError("the cursor is malformed; pass next_cursor exactly as it was returned")
	}
	payload, tag := b[:len(b)-cursorTagLen], b[len(b)-cursorTagLen:]
	if !hmac.Equal(tag, c.tag(payload)) {
		return nil, cursorError("the cursor is not one this server made, or it was altered")
	}
	return payload, nil
}

// parseCursorPayload splits an authenticated payload into its parts.
func parseCursorPayload(b []byte) (biz []byte, list string, hash []byte, after []string, ok bool) {
	biz, n := b[1:1+cursorHashLen], int(b[1+cursorHashLen])
	b = b[2+cursorHashLen:]
	if n == 0 || len(b) < n+cursorHashLen+1 {
		return nil, "", nil, nil, false
	}
	list, hash, count, b := string(b[:n]), b[n:n+cursorHashLen], int(b[n+cursorHashLen]), b[n+cursorHashLen+1:]
	if count == 0 || count > maxCursorAfter {
		return nil, "", nil, nil, false
	}
	after = make([]string, 0, count)
	for range count {
		size, w := binary.Uvarint(b)
		if w <= 0 || size > uint64(len(b)-w) {
			return nil, "", nil, nil, false
		}
		after = append(after, string(b[w:w+int(size)]))
		b = b[w+int(size):]
	}
	return biz, list, hash, after, len(b) == 0
}

// cursorError is an invalid_request error on the cursor parameter.
func cursorError(format string, args ...any) *payd.Error {
	return payd.FieldError("cursor", format, args...)
}

// canonicalFilters returns the request's filters as one string that is the
// same for the same filters and differs for different ones: every query
// parameter except limit and cursor, keys sorted, values in the order sent,
// percent-encoded so that no value can pass for a separator. A cursor is
// bound to it, so the next page is asked with the same filters; limit may
// change from page to page.
func canonicalFilters(q url.Values) string {
	f := make(url.Values, len(q))
	for k, v := range q {
		if k != "limit" && k != "cursor" && len(v) > 0 {
			f[k] = v
		}
	}
	return f.Encode()
}
