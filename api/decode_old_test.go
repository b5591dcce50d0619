package api

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"payd"
)

// maxJSONDepth bounds the nesting of objects and arrays. Request bodies nest a
// few levels; the bound keeps the recursive check's stack small whatever a
// client sends (encoding/json itself stops at 10,000).

// oldDecodeJSON decodes a request body into dst, which must be a non-nil pointer,
// under the strict rules of DESIGN §1 rule 4 (docs/api-conventions.md, "Strict
// JSON"). Every failure is a *payd.Error: invalid_json when the body is not
// UTF-8 JSON, invalid_request naming the field otherwise.
//
// One pass of our own checks the bytes against dst's type; only a body that
// passes reaches encoding/json, which then assigns the values. encoding/json
// alone would accept duplicate keys, case-folded names, unpaired surrogates
// and silently ignored nulls, and its errors carry Go type names and no
// reliable field path.
func oldDecodeJSON(body []byte, dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("api: oldDecodeJSON needs a non-nil pointer, not %T", dst)
	}
	if isBlankJSON(body) {
		// POST routes without a body, such as cancel, decode as {}.
		body = []byte("{}")
	}
	if err := checkJSON(body, jsonShapeOf(v.Type().Elem(), true)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	// Numbers going into interface{} stay exact decimal text (DESIGN §1 rule 1).
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		// Unreachable unless a type's UnmarshalJSON changes its mind between
		// the check and the decode; still the client's body, never a 500.
		return &payd.Error{Code: payd.ErrInvalidRequest, Field: "body", Message: "the request body could not be decoded"}
	}
	return nil
}

// isJSONSpace reports whether c is one of JSON's four whitespace bytes.
func isJSONSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// checkJSON returns the first problem with body as a request for shape root,
// or nil. Syntax errors win over everything else, so a truncated body is
// reported as such even when an earlier member was also wrong.
func checkJSON(body []byte, root *jsonShape) *payd.Error {
	if off := invalidUTF8At(body); off >= 0 {
		s := jsonScanner{data: body, pos: off}
		return &payd.Error{Code: payd.ErrInvalidJSON, Field: "body",
			Message: "the request body is not valid UTF-8 " + s.position()}
	}
	s := &jsonScanner{data: body}
	s.skipSpace()
	first := body[s.pos]
	if first != '{' {
		root = anyShape
	}
	if err := s.value(root); err != nil {
		return err
	}
	if s.skipSpace(); s.pos < len(s.data) {
		return payd.FieldError("body", "the request body has more data after its JSON value %s; send exactly one object", s.position())
	}
	if first != '{' {
		return payd.FieldError("body", "the request body must be a JSON object, not %s", jsonKindName(first))
	}
	return s.err
}

// jsonScanner checks one JSON document against a shape. It stops at the first
// syntax error (returned) and records only the first other problem (err),
// scanning on so that a later syntax error still wins.
type jsonScanner struct {
	data  []byte
	pos   int
	depth int
	path  []jsonPathSeg
	err   *payd.Error
}

// jsonPathSeg is one step of the path to the value being scanned: an object key,
// or an array index when index >= 0.
type jsonPathSeg struct {
	key   string
	index int
}

// fail records e unless an earlier problem is already recorded.
func (s *jsonScanner) fail(e *payd.Error) {
	if s.err == nil {
		s.err = e
	}
}

// failf records an invalid_request error for the current path. It returns
// at once when a problem is already recorded: building paths for every later
// problem of a deep, hostile body would cost time quadratic in its size.
func (s *jsonScanner) failf(format string, args ...any) {
	if s.err == nil {
		s.fail(payd.FieldError(s.field(), format, args...))
	}
}

// value scans the value at s.pos, checking it against sh.
func (s *jsonScanner) value(sh *jsonShape) *payd.Error {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return s.syntaxErr("the body ends where a value should start")
	}
	start, c := s.pos, s.data[s.pos]
	sh = s.expect(sh, c)
	var err *payd.Error
	switch {
	case c == '{':
		err = s.object(sh)
	case c == '[':
		err = s.array(sh)
	case c == '"':
		err = s.stringValue(sh)
	case c == '-' || isJSONDigit(c):
		err = s.numberValue(sh)
	case c == 't' || c == 'f' || c == 'n':
		err = s.literal()
	default:
		return s.unexpected("a value")
	}
	if err == nil && sh.kind == shapeUnmarshaler && s.err == nil {
		s.unmarshal(sh, s.data[start:s.pos])
	}
	return err
}

// expect checks that sh takes a value starting with c and returns the shape
// to scan it with: sh itself without its pointers, or anyShape when the
// value is refused (so that nothing inside it is reported as well) or needs
// no more checks (null).
func (s *jsonScanner) expect(sh *jsonShape, c byte) *jsonShape {
	if c == 'n' {
		if shapeNullable(sh) {
			return sh
		}
		s.typeErr(sh, c)
		return anyShape
	}
	orig := sh
	for sh.kind == shapePointer {
		sh = sh.elem
	}
	if !shapeAccepts(sh, c) {
		s.typeErr(orig, c)
		return anyShape
	}
	return sh
}

// shapeNullable reports whether sh takes an explicit null. Only pointers (and
// values that hold or decode any JSON) do: for any other field encoding/json
// would silently keep the old value, which would hide a client's mistake.
func shapeNullable(sh *jsonShape) bool {
	switch sh.kind {
	case shapePointer, shapeAny, shapeUnmarshaler:
		return true
	case shapeQuoted:
		return sh.elem.kind == shapePointer
	}
	return false
}

// shapeAccepts reports whether a non-pointer, non-null shape takes a JSON value
// starting with c.
func shapeAccepts(sh *jsonShape, c byte) bool {
	switch sh.kind {
	case shapeAny, shapeUnmarshaler:
		return true
	case shapeStruct, shapeMap:
		return c == '{'
	case shapeArray:
		return c == '['
	case shapeSlice:
		return c == '[' || (c == '"' && sh.bytes)
	case shapeString, shapeText, shapeQuoted:
		return c == '"'
	case shapeBool:
		return c == 't' || c == 'f'
	case shapeNumber, shapeInt, shapeUint, shapeFloat:
		return c == '-' || isJSONDigit(c)
	}
	return false
}

// typeErr records that the value starting with c does not fit sh.
func (s *jsonScanner) typeErr(sh *jsonShape, c byte) {
	inner := sh
	for inner.kind == shapePointer {
		inner = inner.elem
	}
	if inner.kind == shapeInvalid {
		s.failf("%s cannot be set in a request", s.subject())
		return
	}
	want := describeShape(sh)
	if shapeNullable(sh) {
		want += " or null"
	}
	s.failf("%s must be %s, not %s", s.subject(), want, jsonKindName(c))
}

// enter counts one more level of nesting and refuses too many.
func (s *jsonScanner) enter() *payd.Error {
	if s.depth++; s.depth > maxJSONDepth {
		return payd.FieldError("body", "the request body nests objects and arrays more than %d levels deep", maxJSONDepth)
	}
	return nil
}

// object scans an object; s.pos is at its '{'.
func (s *jsonScanner) object(sh *jsonShape) *payd.Error {
	if err := s.enter(); err != nil {
		return err
	}
	defer func() { s.depth-- }()
	s.pos++
	if s.skipSpace(); s.peek() == '}' {
		s.pos++
		return nil
	}
	seen := map[string]struct{}{}
	for {
		if err := s.member(sh, seen); err != nil {
			return err
		}
		s.skipSpace()
		switch s.peek() {
		case ',':
			s.pos++
			s.skipSpace()
		case '}':
			s.pos++
			return nil
		default:
			return s.unexpected("',' or '}' after an object member")
		}
	}
}

// member scans one "key": value pair of an object of shape sh.
func (s *jsonScanner) member(sh *jsonShape, seen map[string]struct{}) *payd.Error {
	if s.peek() != '"' {
		return s.unexpected("a string key")
	}
	raw, escaped, problem, err := s.str()
	if err != nil {
		return err
	}
	key := unescapeJSON(raw, escaped)
	if problem != "" {
		s.failf("a key in %s contains %s", s.subject(), problem)
	}
	if s.skipSpace(); s.peek() != ':' {
		return s.unexpected("':' after an object key")
	}
	s.pos++
	s.path = append(s.path, jsonPathSeg{key: key, index: -1})
	defer func() { s.path = s.path[:len(s.path)-1] }()
	if _, dup := seen[key]; dup {
		s.failf("field %q appears more than once", s.quotedField())
	}
	seen[key] = struct{}{}
	return s.value(s.memberShape(sh, key))
}

// memberShape returns the shape of the member named key in an object of
// shape sh, recording unknown fields and map keys of the wrong form.
func (s *jsonScanner) memberShape(sh *jsonShape, key string) *jsonShape {
	switch sh.kind {
	case shapeStruct:
		if f := sh.fields[key]; f != nil {
			return f
		}
		s.failf("unknown field %q", s.quotedField())
		return anyShape
	case shapeMap:
		s.checkMapKey(sh.key, key)
		return sh.elem
	}
	return anyShape
}

// checkMapKey checks a key of a map whose keys are integers or decode
// themselves; string keys need no check.
func (s *jsonScanner) checkMapKey(ks *jsonShape, key string) {
	var err error
	switch ks.kind {
	case shapeInt:
		_, err = strconv.ParseInt(key, 10, ks.typ.Bits())
	case shapeUint:
		_, err = strconv.ParseUint(key, 10, ks.typ.Bits())
	case shapeText:
		err = reflect.New(ks.typ).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(key))
	}
	if err != nil {
		s.failf("key %q of %s is not valid", shortenKey(key), s.parentSubject())
	}
}

// array scans an array; s.pos is at its '['.
func (s *jsonScanner) array(sh *jsonShape) *payd.Error {
	if err := s.enter(); err != nil {
		return err
	}
	defer func() { s.depth-- }()
	s.pos++
	if s.skipSpace(); s.peek() == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		if err := s.element(sh, i); err != nil {
			return err
		}
		s.skipSpace()
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.unexpected("',' or ']' after an array element")
		}
	}
}

// element scans element i of an array of shape sh.
func (s *jsonScanner) element(sh *jsonShape, i int) *payd.Error {
	s.path = append(s.path, jsonPathSeg{index: i})
	defer func() { s.path = s.path[:len(s.path)-1] }()
	es := anyShape
	switch {
	case sh.kind == shapeArray && i >= sh.length:
		s.failf("%s has more elements than the %d allowed", s.parentSubject(), sh.length)
	case sh.kind == shapeArray || sh.kind == shapeSlice:
		es = sh.elem
	}
	return s.value(es)
}

// stringValue scans a string value and checks its contents against sh.
func (s *jsonScanner) stringValue(sh *jsonShape) *payd.Error {
	raw, escaped, problem, err := s.str()
	if err != nil {
		return err
	}
	if problem != "" {
		s.failf("%s contains %s", s.subject(), problem)
		return nil
	}
	switch sh.kind {
	case shapeText:
		if s.err == nil {
			u := reflect.New(sh.typ).Interface().(encoding.TextUnmarshaler)
			s.decodeErr(u.UnmarshalText([]byte(unescapeJSON(raw, escaped))))
		}
	case shapeSlice: // []byte: base64, as encoding/json reads it
		if _, err := base64Std.DecodeString(unescapeJSON(raw, escaped)); err != nil {
			s.failf("%s must be a base64 string", s.subject())
		}
	case shapeQuoted:
		s.quoted(sh, unescapeJSON(raw, escaped))
	}
	return nil
}

// numberValue scans a number and checks that it fits sh.
func (s *jsonScanner) numberValue(sh *jsonShape) *payd.Error {
	lit, err := s.number()
	if err != nil {
		return err
	}
	s.checkNumber(sh, lit)
	return nil
}

// checkNumber checks a JSON number literal against a numeric shape. It calls
// strconv the way encoding/json does, so the two agree on every range.
func (s *jsonScanner) checkNumber(sh *jsonShape, lit string) {
	var err error
	switch sh.kind {
	case shapeInt:
		_, err = strconv.ParseInt(lit, 10, sh.typ.Bits())
	case shapeUint:
		_, err = strconv.ParseUint(lit, 10, sh.typ.Bits())
	case shapeFloat:
		_, err = strconv.ParseFloat(lit, sh.typ.Bits())
	}
	if err == nil {
		return
	}
	if sh.kind != shapeFloat && strings.ContainsAny(lit, ".eE") {
		s.failf("%s must be %s, written without a fraction or exponent", s.subject(), describeShape(sh))
		return
	}
	s.failf("%s must be %s", s.subject(), oldNumberRange(sh))
}

// quoted checks the contents of a ",string" field: a JSON scalar of the
// inner kind written inside a string.
func (s *jsonScanner) quoted(sh *jsonShape, content string) {
	inner := sh.elem
	for inner.kind == shapePointer {
		inner = inner.elem
	}
	sub := &jsonScanner{data: []byte(content), path: s.path}
	var c byte
	if content != "" {
		c = content[0]
	}
	if content == "" || !shapeAccepts(inner, c) || sub.value(inner) != nil || sub.pos != len(content) {
		s.failf("%s must be %s", s.subject(), describeShape(sh))
		return
	}
	if sub.err != nil {
		s.fail(sub.err)
	}
}

// unmarshal runs the UnmarshalJSON of sh's type on raw, so that its error is
// reported with the field's path; the real decode later repeats the call.
func (s *jsonScanner) unmarshal(sh *jsonShape, raw []byte) {
	u := reflect.New(sh.typ).Interface().(json.Unmarshaler)
	s.decodeErr(u.UnmarshalJSON(raw))
}

// decodeErr records the error of a type's own decoding method, always
// naming the field by its path. A payd error's message is kept as written
// for clients; encoding/json's (from a nested json.Unmarshal) name Go types
// and are left out; any other error's text follows "is not valid".
func (s *jsonScanner) decodeErr(err error) {
	if err == nil || s.err != nil {
		return
	}
	msg := fmt.Sprintf("%s is not valid", s.subject())
	var (
		pe *payd.Error
		te *json.UnmarshalTypeError
		se *json.SyntaxError
	)
	switch {
	case errors.As(err, &pe) && pe.Message != "":
		msg = pe.Message
	case errors.As(err, &te), errors.As(err, &se):
	default:
		msg += ": " + err.Error()
	}
	s.fail(&payd.Error{Code: payd.ErrInvalidRequest, Field: s.field(), Message: msg})
}

// literal scans true, false or null.
func (s *jsonScanner) literal() *payd.Error {
	for _, lit := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(s.data[s.pos:], []byte(lit)) {
			s.pos += len(lit)
			return nil
		}
	}
	return s.unexpected("true, false or null")
}
