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
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"payd"
)

// maxJSONDepth bounds the nesting of objects and arrays. Request bodies nest a
// few levels; jsontext itself stops at 10,000.
const maxJSONDepth = 1000

// decodeJSON decodes a request body into dst, which must be a non-nil pointer,
// under the strict rules of DESIGN §1 rule 4 (docs/api-conventions.md, "Strict
// JSON"). Every failure is a *payd.Error: invalid_json when the body is not
// UTF-8 JSON, invalid_request naming the field otherwise.
//
// encoding/json/v2 semantics (github.com/go-json-experiment/json) do most of
// the work: exact names, unknown and duplicate members refused, JSON-pointer
// paths. What they do not do is kept here: a scan first (syntax wins over
// everything, depth, trailing data, NUL and lone surrogates with the field
// that holds them) and hooks that refuse null for values that cannot be null
// and keep encoding/json v1's rules for json.Number, interface{} numbers,
// Go arrays and ",string" fields.
func decodeJSON(body []byte, dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("api: decodeJSON needs a non-nil pointer, not %T", dst)
	}
	if isBlankJSON(body) {
		// POST routes without a body, such as cancel, decode as {}.
		body = []byte("{}")
	}
	if off := invalidUTF8At(body); off >= 0 {
		return &payd.Error{Code: payd.ErrInvalidJSON, Field: "body",
			Message: "the request body is not valid UTF-8 " + position(body, off)}
	}
	first, perr := scanJSON(body)
	if perr != nil {
		return perr
	}
	err := jsonv2.Unmarshal(body, dst, decodeOptions)
	if err == nil && first == nil {
		return nil
	}
	return firstProblem(body, first, err)
}

// errWrongKind marks a JSON value of a kind the Go value cannot take.
var errWrongKind = errors.New("wrong kind of JSON value")

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumberType      = reflect.TypeFor[json.Number]()
)

// decodeOptions are v2's strict rules plus the hooks below. v1's rules for
// []byte (a base64 string or an array of numbers) and ",string" are kept so
// that no request that decoded before is refused now.
var decodeOptions = jsonv2.JoinOptions(
	jsonv2.RejectUnknownMembers(true),
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(true), // lone surrogates: scanJSON names the field
	jsonv1.FormatBytesWithLegacySemantics(true),
	jsonv1.StringifyWithLegacySemantics(true),
	jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(
		jsonv2.UnmarshalFromFunc(decodeNumber),
		jsonv2.UnmarshalFromFunc(decodeAny),
		jsonv2.UnmarshalFromFunc(checkValue),
	)),
)

// decodeNumber reads a json.Number from a JSON number only, as v1 does.
func decodeNumber(dec *jsontext.Decoder, n *json.Number) error {
	if k := dec.PeekKind(); k != '0' {
		return &jsonv2.SemanticError{JSONKind: k, GoType: jsonNumberType, Err: errWrongKind}
	}
	tok, err := dec.ReadToken()
	*n = json.Number(tok.String())
	return err
}

// decodeAny keeps numbers in interface{} values exact decimal text
// (json.Number, DESIGN §1 rule 1) where v2 would make them float64.
func decodeAny(dec *jsontext.Decoder, a *any) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(a)
}

// checkValue runs before every value: it refuses null where v2 would
// silently zero the value, refuses a wrong kind before v2 skips the value
// (so that nothing inside it, such as a duplicate key, is reported instead),
// and decodes Go arrays with v1's length rule. Otherwise v2 goes on
// (SkipFunc).
func checkValue(dec *jsontext.Decoder, v any) error {
	t := reflect.TypeOf(v).Elem()
	k := dec.PeekKind()
	ti := typeInfoOf(t)
	if !ti.takes[k] {
		return &jsonv2.SemanticError{ByteOffset: dec.InputOffset(), JSONKind: k, GoType: t, Err: errWrongKind}
	}
	if k == '"' && ti.number {
		if err := checkQuotedNumber(dec, t); err != nil {
			return err
		}
	}
	if k == '[' && ti.array {
		return decodeArray(dec, reflect.ValueOf(v).Elem())
	}
	return jsonv2.SkipFunc
}

// typeInfo is what checkValue needs to know about a Go type, worked out by
// reflection once per type.
type typeInfo struct {
	takes  [256]bool // by jsontext.Kind, null included
	number bool      // a plain number, which may come quoted
	array  bool      // a Go array without decoding methods
}

// typeInfos caches typeInfo by reflect.Type.
var typeInfos sync.Map

// typeInfoOf returns t's typeInfo.
func typeInfoOf(t reflect.Type) *typeInfo {
	if ti, ok := typeInfos.Load(t); ok {
		return ti.(*typeInfo)
	}
	ti := &typeInfo{
		number: isNumberKind(t.Kind()) && !hasDecodeMethod(t),
		array:  t.Kind() == reflect.Array && !hasDecodeMethod(t),
	}
	ti.takes['n'] = takesNull(t)
	for _, k := range []jsontext.Kind{'"', '0', 't', 'f', '{', '['} {
		ti.takes[k] = takesKind(t, k)
	}
	typeInfos.Store(t, ti)
	return ti
}

// takesNull reports whether t takes an explicit null: pointers, interface{}
// and types that decide for themselves. For any other field v1 would keep
// the old value and v2 would zero it; either would hide a client's mistake.
func takesNull(t reflect.Type) bool {
	return t.Kind() == reflect.Pointer || (t.Kind() == reflect.Interface && t.NumMethod() == 0) ||
		reflect.PointerTo(t).Implements(jsonUnmarshalerType)
}

// hasDecodeMethod reports whether t decodes itself from JSON or text.
func hasDecodeMethod(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(jsonUnmarshalerType) || p.Implements(textUnmarshalerType)
}

// takesKind reports whether a value of type t can take a JSON value of kind
// k (not null). Scalars also take strings: a ",string" field holds them,
// and v2 itself refuses them for any other field.
func takesKind(t reflect.Type, k jsontext.Kind) bool {
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
	}
	return isNumberKind(t.Kind()) && (k == '0' || k == '"')
}

// isNumberKind reports whether k is a Go integer or float kind.
func isNumberKind(k reflect.Kind) bool {
	return reflect.Int <= k && k <= reflect.Float64
}

// checkQuotedNumber refuses a string for a number unless it holds exactly a
// JSON number literal, as v1 does for ",string" fields (v2 would also take
// "00" or "+1"). Map keys are left to v2, which parses them as v1 does.
func checkQuotedNumber(dec *jsontext.Decoder, t reflect.Type) error {
	if atObjectName(dec) {
		return nil
	}
	rest := bytes.TrimLeft(dec.UnreadBuffer(), " \t\r\n:,")
	var s string
	err := jsonv2.Unmarshal(rest[:valueLen(rest)], &s, jsontext.AllowInvalidUTF8(true))
	if err == nil && s != "" && (s[0] == '-' || isJSONDigit(s[0])) && json.Valid([]byte(s)) && !strings.ContainsAny(s, " \t\r\n") {
		return nil
	}
	return &jsonv2.SemanticError{ByteOffset: dec.InputOffset(), JSONKind: '"', GoType: t, Err: strconv.ErrSyntax}
}

// decodeArray decodes a Go array as v1 does (missing elements are zero) but
// refuses an element beyond its length, which v1 would drop silently.
func decodeArray(dec *jsontext.Decoder, va reflect.Value) error {
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	i := 0
	for ; dec.PeekKind() != ']'; i++ {
		if i >= va.Len() {
			return arrayOverflow(dec, i, va.Len())
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

// arrayOverflow reports element i of an array that holds only n.
func arrayOverflow(dec *jsontext.Decoder, i, n int) error {
	ptr := dec.StackPointer()
	if i > 0 {
		ptr = ptr.Parent()
	}
	ptr = ptr.AppendToken(strconv.Itoa(i))
	return &jsonv2.SemanticError{ByteOffset: dec.InputOffset(), JSONPointer: ptr,
		Err: payd.FieldError(pointerField(ptr), "%s has more elements than the %d allowed", pointerSubject(ptr.Parent()), n)}
}
