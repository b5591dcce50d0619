package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"payd"
)

// firstProblem returns the first problem in the body, in document order,
// of the string problem scanJSON found (may be nil) and v2's error (may be
// nil), as an invalid_request naming the field.
func firstProblem(body []byte, sp *stringProblem, err error) error {
	if err == nil {
		return sp.err
	}
	var (
		se  *jsonv2.SemanticError
		sy  *jsontext.SyntacticError
		off int64
		ptr jsontext.Pointer
	)
	switch {
	case errors.As(err, &se):
		off, ptr = se.ByteOffset, se.JSONPointer
		if se.GoType != nil && se.Err != errWrongKind && hasDecodeMethod(se.GoType) {
			// A type's own method runs on the whole value, after the
			// strings inside it were checked.
			off += valueLen(body[off:])
		}
	case errors.As(err, &sy): // a duplicate name
		off, ptr = sy.ByteOffset, sy.JSONPointer
	}
	if sp != nil && sp.offset <= off {
		return sp.err
	}
	return &payd.Error{Code: payd.ErrInvalidRequest, Field: pointerField(ptr), Message: problemMessage(body, err, ptr)}
}

// problemMessage words v2's error for a developer, in JSON terms rather
// than Go's.
func problemMessage(body []byte, err error, ptr jsontext.Pointer) string {
	subj := pointerSubject(ptr)
	var pe *payd.Error
	if errors.As(err, &pe) && pe.Message != "" {
		return pe.Message
	}
	var se *jsonv2.SemanticError
	switch {
	case errors.Is(err, jsontext.ErrDuplicateName):
		return fmt.Sprintf("field %q appears more than once", pointerPath(ptr))
	case errors.Is(err, jsonv2.ErrUnknownName):
		return fmt.Sprintf("unknown field %q", pointerPath(ptr))
	case !errors.As(err, &se) || se.GoType == nil:
		return subj + " is not valid"
	}
	return semanticMessage(body, se, subj, ptr)
}

// semanticMessage words a SemanticError from v2 or from the hooks.
func semanticMessage(body []byte, se *jsonv2.SemanticError, subj string, ptr jsontext.Pointer) string {
	t := se.GoType
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	k := se.JSONKind
	switch {
	case se.Err == errWrongKind:
		return kindMessage(subj, se.GoType, k)
	case hasDecodeMethod(t):
		return methodMessage(subj, se.Err)
	case k == '"' && isObjectName(body, se.ByteOffset):
		return fmt.Sprintf("key %q of %s is not valid", shortenKey(ptr.LastToken()), pointerSubject(ptr.Parent()))
	case k == '"' && t.Kind() == reflect.Slice:
		return subj + " must be a base64 string"
	case k == '"' && se.Err == nil:
		return kindMessage(subj, t, '"')
	case k == '"' || (k == '0' && se.Err == nil):
		return fmt.Sprintf("%s must be a string holding %s", subj, describeType(t))
	case k == '0' && t.Kind() < reflect.Float32 && bytes.ContainsAny(se.JSONValue, ".eE"):
		return fmt.Sprintf("%s must be %s, written without a fraction or exponent", subj, describeType(t))
	case k == '0':
		return fmt.Sprintf("%s must be %s", subj, numberRange(t))
	}
	return subj + " is not valid"
}

// kindMessage says which JSON a value of type t takes instead of kind k.
func kindMessage(subj string, t reflect.Type, k jsontext.Kind) string {
	want := describeType(t)
	if want == "" {
		return subj + " cannot be set in a request"
	}
	if takesNull(t) {
		want += " or null"
	}
	return fmt.Sprintf("%s must be %s, not %s", subj, want, jsonKindName(byte(k)))
}

// methodMessage words the error of a type's own decoding method: a payd
// error's message as written, encoding/json's (which name Go types) left
// out, any other after "is not valid".
func methodMessage(subj string, err error) string {
	var (
		te *json.UnmarshalTypeError
		se *json.SyntaxError
	)
	if err == nil || errors.As(err, &te) || errors.As(err, &se) {
		return subj + " is not valid"
	}
	return subj + " is not valid: " + err.Error()
}

// isObjectName reports whether the string at off in body is an object key.
func isObjectName(body []byte, off int64) bool {
	rest := bytes.TrimLeft(body[off:], " \t\r\n,")
	n := valueLen(rest)
	after := bytes.TrimLeft(rest[n:], " \t\r\n")
	return n > 0 && len(after) > 0 && after[0] == ':'
}

// describeType names the JSON a Go type takes, in words for a developer
// rather than Go type names, or "" when it takes none.
func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == jsonNumberType:
		return "a number"
	case reflect.PointerTo(t).Implements(jsonUnmarshalerType), t.Kind() == reflect.Interface && t.NumMethod() == 0:
		return "any JSON value"
	case reflect.PointerTo(t).Implements(textUnmarshalerType), t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Float32, t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return "a base64 string"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a non-negative integer"
	}
	return ""
}

// numberRange describes the numbers a numeric type holds.
func numberRange(t reflect.Type) string {
	bits := t.Bits()
	switch describeType(t) {
	case "an integer":
		return fmt.Sprintf("an integer from %d to %d", int64(-1)<<(bits-1), int64(1)<<(bits-1)-1)
	case "a non-negative integer":
		return fmt.Sprintf("an integer from 0 to %d", uint64(1)<<(bits-1)<<1-1)
	}
	return "a number of a representable size"
}

// jsonKindName names the kind of JSON value that starts with c.
func jsonKindName(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
