package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"payd"
)

// decodeJSONv2 is the candidate: encoding/json/v2 semantics plus what they
// do not cover (explicit null, NUL, unpaired surrogates with a field, depth).
func decodeJSONv2(body []byte, dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("api: decodeJSON needs a non-nil pointer, not %T", dst)
	}
	if isBlankJSON(body) {
		body = []byte("{}")
	}
	if off := invalidUTF8At(body); off >= 0 {
		s := jsonScanner{data: body, pos: off}
		return &payd.Error{Code: payd.ErrInvalidJSON, Field: "body",
			Message: "the request body is not valid UTF-8 " + s.position()}
	}
	pre, perr := prescan(body)
	if perr != nil {
		return perr
	}
	err := jsonv2.Unmarshal(body, dst, v2Options)
	if err == nil && pre == nil {
		return nil
	}
	return pickProblem(body, pre, err)
}

// stringProblem is a NUL or lone surrogate found by prescan.
type stringProblem struct {
	offset int64
	err    *payd.Error
}

// prescan checks syntax, depth, trailing data and the top-level kind, and
// finds the first string with a problem.
func prescan(body []byte) (*stringProblem, *payd.Error) {
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	first := body[bytes.IndexFunc(body, func(r rune) bool { return !isJSONSpace(byte(r)) })]
	var prob *stringProblem
	for {
		var err error
		k := dec.PeekKind()
		off := dec.InputOffset()
		if k == '"' {
			var raw jsontext.Value
			isName := v2NeedName(dec)
			raw, err = dec.ReadValue()
			if err == nil && prob == nil {
				prob = rawStringProblem(dec, raw, isName, off)
			}
		} else {
			_, err = dec.ReadToken()
		}
		if err != nil {
			return nil, v2SyntaxErr(body, err)
		}
		if dec.StackDepth() > maxJSONDepth {
			return nil, payd.FieldError("body", "the request body nests objects and arrays more than %d levels deep", maxJSONDepth)
		}
		if dec.StackDepth() == 0 {
			break
		}
	}
	s := &jsonScanner{data: body, pos: int(dec.InputOffset())}
	if s.skipSpace(); s.pos < len(s.data) {
		return nil, payd.FieldError("body", "the request body has more data after its JSON value %s; send exactly one object", s.position())
	}
	if first != '{' {
		return nil, payd.FieldError("body", "the request body must be a JSON object, not %s", jsonKindName(first))
	}
	return prob, nil
}

// v2NeedName reports whether the decoder is at an object name.
func v2NeedName(dec *jsontext.Decoder) bool {
	k, n := dec.StackIndex(dec.StackDepth())
	return k == '{' && n%2 == 0
}

// rawStringProblem checks one raw string token for NUL and lone surrogates.
func rawStringProblem(dec *jsontext.Decoder, raw []byte, isName bool, off int64) *stringProblem {
	problem := ""
	for i := 0; i < len(raw) && problem == ""; {
		if raw[i] != '\\' {
			i++
			continue
		}
		n, p := escapeAt(raw, i)
		problem = p
		i += n
	}
	if problem == "" {
		return nil
	}
	ptr := dec.StackPointer()
	lead := bytes.IndexByte(raw, '"')
	off += int64(lead)
	if isName {
		field := pointerField(ptr.Parent())
		return &stringProblem{offset: off, err: payd.FieldError(field, "a key in %s contains %s", pointerSubject(ptr.Parent()), problem)}
	}
	return &stringProblem{offset: off, err: payd.FieldError(pointerField(ptr), "%s contains %s", pointerSubject(ptr), problem)}
}

// pointerField turns a JSON pointer into payd's dotted field.
func pointerField(p jsontext.Pointer) string {
	var segs []string
	for tok := range p.Tokens() {
		segs = append(segs, shortenKey(tok))
	}
	if f := strings.Join(segs, "."); f != "" {
		return f
	}
	return "body"
}

// pointerSubject names a pointer at the start of a message.
func pointerSubject(p jsontext.Pointer) string {
	if p == "" {
		return "the request body"
	}
	return "field " + pointerField(p)
}

// v2SyntaxErr turns a jsontext error into invalid_json.
func v2SyntaxErr(body []byte, err error) *payd.Error {
	var se *jsontext.SyntacticError
	off := len(body)
	msg := err.Error()
	if errors.As(err, &se) {
		off = int(se.ByteOffset)
		msg = se.Err.Error()
	}
	s := jsonScanner{data: body, pos: min(off, len(body))}
	return &payd.Error{Code: payd.ErrInvalidJSON, Field: "body", Message: "the request body is not valid JSON: " + msg + " " + s.position()}
}

// errNullRefused marks an explicit null for a value that cannot be null.
var errNullRefused = errors.New("null refused")

// v2Options are the unmarshal options of the candidate.
var v2Options = jsonv2.JoinOptions(
	jsonv2.RejectUnknownMembers(true),
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(true),
	jsonv1.FormatBytesWithLegacySemantics(true),
	jsonv1.StringifyWithLegacySemantics(true),
	jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(
		jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, n *json.Number) error {
			if dec.PeekKind() == 'n' {
				return errNullRefused
			}
			if dec.PeekKind() != '0' {
				return &jsonv2.SemanticError{JSONKind: dec.PeekKind(), Err: errKind}
			}
			tok, err := dec.ReadToken()
			*n = json.Number(tok.String())
			return err
		}),
		jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, a *any) error {
			raw, err := dec.ReadValue()
			if err != nil {
				return err
			}
			d := json.NewDecoder(bytes.NewReader(raw))
			d.UseNumber()
			return d.Decode(a)
		}),
		jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, v any) error {
			t := reflect.TypeOf(v).Elem()
			if dec.PeekKind() == 'n' && !v2Nullable(t) {
				return errNullRefused
			}
			if err := v2QuotedNumber(dec, t); err != nil {
				return err
			}
			if k := dec.PeekKind(); k != 'n' && !v2Accepts(t, k) {
				return &jsonv2.SemanticError{ByteOffset: dec.InputOffset(), JSONKind: k, GoType: t, Err: errKind}
			}
			if t.Kind() == reflect.Array && dec.PeekKind() == '[' && !reflect.PointerTo(t).Implements(jsonUnmarshalerType) {
				return v2Array(dec, reflect.ValueOf(v).Elem())
			}
			return jsonv2.SkipFunc
		}),
	)),
)

var errKind = errors.New("wrong kind")

// v2Nullable reports whether t takes an explicit null.
func v2Nullable(t reflect.Type) bool {
	switch {
	case t.Kind() == reflect.Pointer, t.Kind() == reflect.Interface && t.NumMethod() == 0:
		return true
	case reflect.PointerTo(t).Implements(jsonUnmarshalerType):
		return true
	}
	return false
}

// pickProblem chooses between the first string problem and v2's error.
func pickProblem(body []byte, pre *stringProblem, err error) error {
	if err == nil {
		return pre.err
	}
	var se *jsonv2.SemanticError
	var sy *jsontext.SyntacticError
	var off int64
	var ptr jsontext.Pointer
	switch {
	case errors.As(err, &se):
		off, ptr = se.ByteOffset, se.JSONPointer
		if se.GoType != nil && se.Err != errKind && v2HasMethod(se.GoType) {
			// A type's own method runs after the strings inside its value
			// were checked.
			off += v2ValueLen(body[off:])
		}
	case errors.As(err, &sy):
		off, ptr = sy.ByteOffset, sy.JSONPointer
	}
	if pre != nil && pre.offset <= off {
		return pre.err
	}
	if pre != nil && pre.offset < off {
		return pre.err
	}
	return &payd.Error{Code: payd.ErrInvalidRequest, Field: pointerField(ptr), Message: v2Message(err, ptr)}
}

// v2Message words v2's error for a client.
func v2Message(err error, ptr jsontext.Pointer) string {
	var pe *payd.Error
	if errors.As(err, &pe) && pe.Message != "" {
		return pe.Message
	}
	return pointerSubject(ptr) + " is not valid"
}

// v2Array decodes a Go array as encoding/json does (missing elements are
// zero) but refuses elements beyond its length at the first extra one.
func v2Array(dec *jsontext.Decoder, va reflect.Value) error {
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	i := 0
	for ; dec.PeekKind() != ']'; i++ {
		if i >= va.Len() {
			ptr := dec.StackPointer()
			if i > 0 {
				ptr = ptr.Parent()
			}
			ptr = ptr.AppendToken(strconv.Itoa(i))
			return &jsonv2.SemanticError{ByteOffset: dec.InputOffset(), JSONPointer: ptr,
				Err: payd.FieldError(pointerField(ptr), "%s has more elements than the %d allowed", pointerSubject(ptr.Parent()), va.Len())}
		}
		if err := jsonv2.UnmarshalDecode(dec, va.Index(i).Addr().Interface()); err != nil {
			return err
		}
	}
	for ; i < va.Len(); i++ {
		va.Index(i).SetZero()
	}
	_, err := dec.ReadToken()
	return err
}

// v2Accepts reports whether a value of type t can take a JSON value of kind
// k (not null). Strings go through for scalars, which ",string" fields take.
func v2Accepts(t reflect.Type, k jsontext.Kind) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case reflect.PointerTo(t).Implements(jsonUnmarshalerType):
		return true
	case reflect.PointerTo(t).Implements(textUnmarshalerType):
		return k == '"'
	case t == jsonNumberType:
		return k == '0'
	}
	switch t.Kind() {
	case reflect.Interface:
		return t.NumMethod() == 0
	case reflect.Struct, reflect.Map:
		return k == '{'
	case reflect.Slice:
		return k == '[' || (k == '"' && t.Elem().Kind() == reflect.Uint8)
	case reflect.Array:
		return k == '['
	case reflect.String:
		return k == '"'
	case reflect.Bool:
		return k == 't' || k == 'f' || k == '"'
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return k == '0' || k == '"'
	}
	return false
}

// v2HasMethod reports whether t decodes itself.
func v2HasMethod(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(jsonUnmarshalerType) || p.Implements(textUnmarshalerType)
}

// v2ValueLen measures the JSON value at the start of b (after whitespace).
func v2ValueLen(b []byte) int64 {
	d := jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if _, err := d.ReadValue(); err != nil {
		return 0
	}
	return d.InputOffset()
}

// v2QuotedNumber refuses a string for a number whose contents are not a
// JSON number literal, as encoding/json does for ",string" fields.
func v2QuotedNumber(dec *jsontext.Decoder, t reflect.Type) error {
	if dec.PeekKind() != '"' || v2HasMethod(t) || v2NeedName(dec) {
		return nil
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
	default:
		return nil
	}
	rest := bytes.TrimLeft(dec.UnreadBuffer(), " \t\r\n:,")
	raw := rest[:v2ValueLen(rest)]
	var str string
	if jsonv2.Unmarshal(raw, &str, jsontext.AllowInvalidUTF8(true)) == nil && str != "" && (str[0] == '-' || isJSONDigit(str[0])) && json.Valid([]byte(str)) && !strings.ContainsAny(str, " \t\r\n") {
		return nil
	}
	return &jsonv2.SemanticError{ByteOffset: dec.InputOffset(), JSONKind: '"', GoType: t, Err: strconv.ErrSyntax}
}
