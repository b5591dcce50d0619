package api

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"payd"
)

// base64Std is the alphabet encoding/json uses for []byte.
var base64Std = base64.StdEncoding

// The problems a string can have that JSON allows but payd refuses (spec
// 7.2): text fields may hold neither a null character nor a lone surrogate.

// maxPathKey bounds how much of one key an error's field path repeats, so
// that a megabyte-long unknown key does not come back in full.

// peek returns the byte at s.pos, or 0 at the end of the body (0 is never
// valid there, so callers need no separate end check).
func (s *jsonScanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// skipSpace moves past JSON whitespace.
func (s *jsonScanner) skipSpace() {
	for s.pos < len(s.data) && isJSONSpace(s.data[s.pos]) {
		s.pos++
	}
}

// syntaxErr returns an invalid_json error for s.pos.
func (s *jsonScanner) syntaxErr(format string, args ...any) *payd.Error {
	msg := "the request body is not valid JSON: " + fmt.Sprintf(format, args...) + " " + s.position()
	return &payd.Error{Code: payd.ErrInvalidJSON, Field: "body", Message: msg}
}

// unexpected returns a syntax error saying what was wanted at s.pos and what
// was found instead.
func (s *jsonScanner) unexpected(want string) *payd.Error {
	if s.pos >= len(s.data) {
		return s.syntaxErr("expected %s but the body ends", want)
	}
	r, _ := utf8.DecodeRune(s.data[s.pos:])
	return s.syntaxErr("expected %s but found %q", want, r)
}

// position describes s.pos for people (line and column, counted in
// characters) and for tools (byte offset).
func (s *jsonScanner) position() string {
	before := s.data[:s.pos]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return fmt.Sprintf("at line %d, column %d (byte offset %d)", line, col, s.pos)
}

// field returns the dotted path of the current value, such as
// "items.0.name", or "body" at the top (and for a top-level key "", since
// a field is never empty).
func (s *jsonScanner) field() string {
	if p := jsonPathString(s.path); p != "" {
		return p
	}
	return "body"
}

// subject names the current value at the start of a message.
func (s *jsonScanner) subject() jsonPathText { return jsonPathText{path: s.path, subject: true} }

// parentSubject names the object or array that holds the current value.
func (s *jsonScanner) parentSubject() jsonPathText {
	return jsonPathText{path: s.path[:max(len(s.path)-1, 0)], subject: true}
}

// quotedField is the current path for quoting in a message.
func (s *jsonScanner) quotedField() jsonPathText { return jsonPathText{path: s.path} }

// jsonPathText is a path as message text. It is built only when a message is
// formatted (fmt calls String), which failf skips after the first problem.
type jsonPathText struct {
	path    []jsonPathSeg
	subject bool // "field a.b" or "the request body", rather than "a.b"
}

// String spells the path out.
func (p jsonPathText) String() string {
	switch {
	case !p.subject:
		return jsonPathString(p.path)
	case len(p.path) == 0:
		return "the request body"
	}
	return "field " + jsonPathString(p.path)
}

// jsonPathString joins a path with dots, shortening very long keys.
func jsonPathString(path []jsonPathSeg) string {
	var b strings.Builder
	for i, p := range path {
		if i > 0 {
			b.WriteByte('.')
		}
		if p.index >= 0 {
			b.WriteString(strconv.Itoa(p.index))
			continue
		}
		b.WriteString(shortenKey(p.key))
	}
	return b.String()
}

// str scans the string starting at s.pos and returns its still-escaped
// contents, whether it holds escapes, and the first problem payd refuses in
// it ("" when none).
func (s *jsonScanner) str() (raw []byte, escaped bool, problem string, err *payd.Error) {
	start := s.pos + 1
	for i := start; i < len(s.data); {
		switch c := s.data[i]; {
		case c == '"':
			s.pos = i + 1
			return s.data[start:i], escaped, problem, nil
		case c == '\\':
			escaped = true
			n, p := oldEscapeAt(s.data, i)
			if n == 0 {
				s.pos = i
				return nil, false, "", s.syntaxErr("a string has an invalid escape sequence")
			}
			if problem == "" {
				problem = p
			}
			i += n
		case c < 0x20:
			s.pos = i
			return nil, false, "", s.syntaxErr("a string holds the control character %U, which must be escaped", rune(c))
		default:
			i++
		}
	}
	s.pos = len(s.data)
	return nil, false, "", s.syntaxErr("the body ends inside a string")
}

// oldEscapeAt measures the escape sequence at b[i] (a backslash) and reports a
// problem in it. n is 0 when the sequence is not valid JSON. A high surrogate
// immediately followed by an escaped low surrogate is one 12-byte sequence.
func oldEscapeAt(b []byte, i int) (n int, problem string) {
	if i+1 >= len(b) {
		return 0, ""
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, ""
	case 'u':
	default:
		return 0, ""
	}
	r, ok := oldHex4(b, i+2)
	switch {
	case !ok:
		return 0, ""
	case r == 0:
		return 6, problemNUL
	case !utf16.IsSurrogate(r):
		return 6, ""
	}
	if _, ok := oldLowSurrogateAt(b, i+6); ok && r < 0xDC00 {
		return 12, ""
	}
	return 6, problemSurrogate
}

// oldLowSurrogateAt returns the low surrogate escaped at b[i:], if one is.
func oldLowSurrogateAt(b []byte, i int) (rune, bool) {
	if i+1 >= len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	r, ok := oldHex4(b, i+2)
	return r, ok && 0xDC00 <= r && r <= 0xDFFF
}

// oldHex4 decodes the four hex digits at b[i:].
func oldHex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
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
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// jsonEscapes maps the letter after a backslash to the byte it stands for.
var jsonEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unescapeJSON decodes the contents of a string that str accepted. Lone
// surrogates become U+FFFD as in encoding/json; callers have already refused
// them, so this only keeps error paths readable.
func unescapeJSON(raw []byte, escaped bool) string {
	if !escaped {
		return string(raw)
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			out = append(out, raw[i])
			i++
			continue
		}
		if raw[i+1] != 'u' {
			out = append(out, jsonEscapes[raw[i+1]])
			i += 2
			continue
		}
		r, _ := oldHex4(raw, i+2)
		i += 6
		if utf16.IsSurrogate(r) {
			if lo, ok := oldLowSurrogateAt(raw, i); ok && r < 0xDC00 {
				r, i = utf16.DecodeRune(r, lo), i+6
			} else {
				r = utf8.RuneError
			}
		}
		out = utf8.AppendRune(out, r)
	}
	return string(out)
}

// number scans a number with JSON's grammar and returns its literal.
func (s *jsonScanner) number() (string, *payd.Error) {
	start := s.pos
	if s.peek() == '-' {
		s.pos++
	}
	switch c := s.peek(); {
	case c == '0':
		s.pos++
	case isJSONDigit(c):
		s.digits()
	default:
		return "", s.unexpected("a digit")
	}
	if s.peek() == '.' {
		s.pos++
		if !isJSONDigit(s.peek()) {
			return "", s.unexpected("a digit after the decimal point")
		}
		s.digits()
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.pos++
		if c := s.peek(); c == '+' || c == '-' {
			s.pos++
		}
		if !isJSONDigit(s.peek()) {
			return "", s.unexpected("a digit in the exponent")
		}
		s.digits()
	}
	return string(s.data[start:s.pos]), nil
}

// digits moves past a run of digits.
func (s *jsonScanner) digits() {
	for isJSONDigit(s.peek()) {
		s.pos++
	}
}

// describeShape names the JSON that sh takes, in words for a developer rather
// than Go type names.
func describeShape(sh *jsonShape) string {
	for sh.kind == shapePointer {
		sh = sh.elem
	}
	switch sh.kind {
	case shapeStruct, shapeMap:
		return "an object"
	case shapeSlice, shapeArray:
		if sh.bytes {
			return "a base64 string"
		}
		return "an array"
	case shapeString, shapeText:
		return "a string"
	case shapeQuoted:
		return "a string holding " + describeShape(sh.elem)
	case shapeBool:
		return "a boolean"
	case shapeInt:
		return "an integer"
	case shapeUint:
		return "a non-negative integer"
	case shapeNumber, shapeFloat:
		return "a number"
	}
	return "any JSON value"
}

// oldNumberRange describes the numbers a numeric shape holds.
func oldNumberRange(sh *jsonShape) string {
	bits := sh.typ.Bits()
	switch sh.kind {
	case shapeInt:
		return fmt.Sprintf("an integer from %d to %d", int64(-1)<<(bits-1), int64(1)<<(bits-1)-1)
	case shapeUint:
		return fmt.Sprintf("an integer from 0 to %d", uint64(1)<<(bits-1)<<1-1)
	}
	return "a number of a representable size"
}
