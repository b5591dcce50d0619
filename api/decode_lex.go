package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"payd"
)

// The problems a string can have that JSON allows but payd refuses (spec
// 7.2): text fields may hold neither a null character nor a lone surrogate.
const (
	problemNUL       = `a null character (\u0000)`
	problemSurrogate = "an escaped unpaired UTF-16 surrogate"
)

// maxPathKey bounds how much of one key an error's field path repeats, so
// that a megabyte-long unknown key does not come back in full.
const maxPathKey = 64

// stringProblem is the first string (value or key) holding a problem.
type stringProblem struct {
	offset int64 // where the string starts
	err    *payd.Error
}

// scanJSON reads the body once, token by token, before anything is decoded:
// a syntax error wins over every other problem, and nesting, trailing data
// and the top-level kind are refused here. It also returns the first string
// holding NUL or a lone surrogate, which v2 would take or refuse without
// naming the field.
func scanJSON(body []byte) (*stringProblem, *payd.Error) {
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var sp *stringProblem
	for {
		var err error
		if dec.PeekKind() == '"' {
			name := atObjectName(dec)
			var raw jsontext.Value
			if raw, err = dec.ReadValue(); err == nil && sp == nil {
				sp = checkString(dec, raw, name)
			}
		} else {
			_, err = dec.ReadToken()
		}
		switch {
		case err != nil:
			return nil, syntaxError(body, err)
		case dec.StackDepth() > maxJSONDepth:
			return nil, payd.FieldError("body", "the request body nests objects and arrays more than %d levels deep", maxJSONDepth)
		case dec.StackDepth() == 0:
			return sp, checkTop(body, int(dec.InputOffset()))
		}
	}
}

// checkTop refuses data after the body's one JSON value, which ends at end,
// and a value that is not an object.
func checkTop(body []byte, end int) *payd.Error {
	if rest := bytes.TrimLeft(body[end:], " \t\r\n"); len(rest) > 0 {
		return payd.FieldError("body", "the request body has more data after its JSON value %s; send exactly one object",
			position(body, len(body)-len(rest)))
	}
	if first := bytes.TrimLeft(body, " \t\r\n")[0]; first != '{' {
		return payd.FieldError("body", "the request body must be a JSON object, not %s", jsonKindName(first))
	}
	return nil
}

// atObjectName reports whether the decoder's next token is an object name.
func atObjectName(dec *jsontext.Decoder) bool {
	k, n := dec.StackIndex(dec.StackDepth())
	return k == '{' && n%2 == 0
}

// checkString returns the problem in the string raw (still escaped) that dec
// has just read, or nil. A problem in a key is reported on the object.
func checkString(dec *jsontext.Decoder, raw []byte, name bool) *stringProblem {
	problem := ""
	for i := 0; i < len(raw) && problem == ""; {
		if raw[i] != '\\' {
			i++
			continue
		}
		var n int
		n, problem = escapeAt(raw, i)
		i += n
	}
	if problem == "" {
		return nil
	}
	off := dec.InputOffset() - int64(len(raw))
	ptr := dec.StackPointer()
	if name {
		return &stringProblem{off, payd.FieldError(pointerField(ptr.Parent()), "a key in %s contains %s", pointerSubject(ptr.Parent()), problem)}
	}
	return &stringProblem{off, payd.FieldError(pointerField(ptr), "%s contains %s", pointerSubject(ptr), problem)}
}

// escapeAt measures the escape sequence at b[i] (a backslash, in a string
// jsontext accepted) and reports a problem in it. A high surrogate
// immediately followed by an escaped low surrogate is one 12-byte sequence.
func escapeAt(b []byte, i int) (n int, problem string) {
	if b[i+1] != 'u' {
		return 2, ""
	}
	r := hex4(b, i+2)
	switch {
	case r == 0:
		return 6, problemNUL
	case !utf16.IsSurrogate(r):
		return 6, ""
	case r < 0xDC00 && i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u':
		if lo := hex4(b, i+8); 0xDC00 <= lo && lo <= 0xDFFF {
			return 12, ""
		}
	}
	return 6, problemSurrogate
}

// hex4 decodes the four hex digits at b[i:]; -1 if they are not.
func hex4(b []byte, i int) rune {
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case isJSONDigit(c):
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// syntaxError turns a jsontext error into invalid_json with a position.
func syntaxError(body []byte, err error) *payd.Error {
	off, msg := len(body), err.Error()
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		off, msg = int(se.ByteOffset), se.Err.Error()
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "the body ends before its JSON value does"
	}
	return &payd.Error{Code: payd.ErrInvalidJSON, Field: "body",
		Message: "the request body is not valid JSON: " + msg + " " + position(body, min(off, len(body)))}
}

// valueLen measures the JSON value at the start of b (after whitespace), or
// 0 when there is none.
func valueLen(b []byte) int64 {
	d := jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if _, err := d.ReadValue(); err != nil {
		return 0
	}
	return d.InputOffset()
}

// position describes offset off of body for people (line and column,
// counted in characters) and for tools (byte offset).
func position(body []byte, off int) string {
	before := body[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return fmt.Sprintf("at line %d, column %d (byte offset %d)", line, col, off)
}

// isBlankJSON reports whether b holds nothing but JSON whitespace. (Not
// bytes.TrimSpace: that also trims Unicode spaces, which JSON does not allow.)
func isBlankJSON(b []byte) bool {
	return len(bytes.TrimLeft(b, " \t\r\n")) == 0
}

// isJSONDigit reports whether c is an ASCII digit.
func isJSONDigit(c byte) bool { return '0' <= c && c <= '9' }

// invalidUTF8At returns the offset of the first byte of b that is not part of
// valid UTF-8, or -1.
func invalidUTF8At(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// pointerField turns a JSON pointer into payd's dotted field, such as
// "items.0.name", or "body" at the top (and for a top-level key "", since a
// field is never empty).
func pointerField(p jsontext.Pointer) string {
	if f := pointerPath(p); f != "" {
		return f
	}
	return "body"
}

// pointerPath joins a pointer's tokens with dots, shortening long keys.
func pointerPath(p jsontext.Pointer) string {
	var b strings.Builder
	first := true
	for tok := range p.Tokens() {
		if !first {
			b.WriteByte('.')
		}
		first = false
		b.WriteString(shortenKey(tok))
	}
	return b.String()
}

// pointerSubject names the value at p at the start of a message.
func pointerSubject(p jsontext.Pointer) string {
	if p == "" {
		return "the request body"
	}
	return "field " + pointerPath(p)
}

// shortenKey cuts s to about maxPathKey bytes on a character boundary.
func shortenKey(s string) string {
	if len(s) <= maxPathKey {
		return s
	}
	cut := maxPathKey
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
