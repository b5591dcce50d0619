package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"payd"
)

// decodeItem is an element of decodeReq.Items.
type decodeItem struct {
	Name string `json:"name"`
	Qty  int64  `json:"qty,omitempty"`
}

// decodeCustomer is a nested object reached through a pointer.
type decodeCustomer struct {
	Email string  `json:"email"`
	Name  *string `json:"name"`
}

// decodeBase is embedded in decodeReq, whose members it promotes.
type decodeBase struct {
	Reference string `json:"reference,omitempty"`
}

// decodeCode decodes itself and refuses values with a payd error, the way
// wire types of the API are expected to.
type decodeCode string

// UnmarshalJSON accepts strings starting with "c_".
func (c *decodeCode) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil || !strings.HasPrefix(s, "c_") {
		return payd.FieldError("code", "code must be a string starting with c_")
	}
	*c = decodeCode(s)
	return nil
}

// decodeWrapped decodes itself with a nested json.Unmarshal, whose errors
// name Go types and must not reach clients.
type decodeWrapped struct{ N int }

// UnmarshalJSON reads an object {"n": integer}.
func (w *decodeWrapped) UnmarshalJSON(b []byte) error {
	var v struct {
		N int `json:"n"`
	}
	err := json.Unmarshal(b, &v)
	w.N = v.N
	return err
}

// decodeLevel decodes itself from text and refuses with a plain error.
type decodeLevel int

// UnmarshalText accepts "low" and "high".
func (l *decodeLevel) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return errors.New("the level must be low or high")
	}
	return nil
}

// decodeReq exercises every kind of field decodeJSON supports.
type decodeReq struct {
	decodeBase
	Amount   int64             `json:"amount"`
	Currency string            `json:"currency"`
	Capture  *bool             `json:"capture"`
	Small    int8              `json:"small"`
	Count    uint32            `json:"count"`
	Ratio    float64           `json:"ratio"`
	Metadata map[string]string `json:"metadata"`
	Items    []decodeItem      `json:"items"`
	Customer *decodeCustomer   `json:"customer"`
	Extra    json.RawMessage   `json:"extra"`
	Any      any               `json:"any"`
	Data     []byte            `json:"data"`
	Code     decodeCode        `json:"code"`
	Level    decodeLevel       `json:"level"`
	Internal string            `json:"-"`
	Quoted   int64             `json:"quoted,string"`
	Counts   map[int]int       `json:"counts"`
	Pair     [2]int            `json:"pair"`
	Num      json.Number       `json:"num"`
	Wrapped  *decodeWrapped    `json:"wrapped"`
	Untagged string
	//lint:ignore U1000 never read: the case "unexported" checks that its name is an unknown field
	hidden string
}

// TestDecodeJSONAccepts checks bodies that must decode, and what they
// decode to.
func TestDecodeJSONAccepts(t *testing.T) {
	yes, name := true, "Ann"
	tests := []struct {
		name string
		body string
		want decodeReq
	}{
		{"empty body", "", decodeReq{}},
		{"whitespace body", " \r\n\t ", decodeReq{}},
		{"empty object", "{}", decodeReq{}},
		{"scalars", `{"amount":-42,"currency":"usd","capture":true,"small":-128,"count":4294967295,"ratio":1e2}`,
			decodeReq{Amount: -42, Currency: "usd", Capture: &yes, Small: -128, Count: 4294967295, Ratio: 100}},
		{"minus zero", `{"amount":-0}`, decodeReq{}},
		{"int64 limits", `{"amount":-9223372036854775808}`, decodeReq{Amount: -9223372036854775808}},
		{"nested", `{"customer":{"email":"a@b.c","name":"Ann"},"items":[{"name":"x","qty":2},{"name":"y"}]}`,
			decodeReq{Customer: &decodeCustomer{Email: "a@b.c", Name: &name}, Items: []decodeItem{{"x", 2}, {"y", 0}}}},
		{"metadata takes any key", `{"metadata":{"amount":"1","Amount":"2","":"3"}}`,
			decodeReq{Metadata: map[string]string{"amount": "1", "Amount": "2", "": "3"}}},
		{"null for pointers", `{"capture":null,"customer":null,"extra":null,"any":null}`,
			decodeReq{Extra: json.RawMessage("null")}},
		{"raw and any", `{"extra":{"a":[1,{"b":null}]},"any":{"n":12345678901234567890}}`,
			decodeReq{Extra: json.RawMessage(`{"a":[1,{"b":null}]}`), Any: map[string]any{"n": json.Number("12345678901234567890")}}},
		{"escapes", `{"currency":"\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t"}`, decodeReq{Currency: "é😀\"\\/\b\f\n\r\t"}},
		{"raw non-ASCII", `{"currency":"日本"}`, decodeReq{Currency: "日本"}},
		{"base64", `{"data":"aGk="}`, decodeReq{Data: []byte("hi")}},
		{"bytes as array", `{"data":[104,105]}`, decodeReq{Data: []byte("hi")}},
		{"unmarshalers", `{"code":"c_1","level":"high"}`, decodeReq{Code: "c_1", Level: 2}},
		{"quoted", `{"quoted":"-12"}`, decodeReq{Quoted: -12}},
		{"integer keys", `{"counts":{"1":2,"-3":4}}`, decodeReq{Counts: map[int]int{1: 2, -3: 4}}},
		{"array", `{"pair":[1,2]}`, decodeReq{Pair: [2]int{1, 2}}},
		{"short array", `{"pair":[1]}`, decodeReq{Pair: [2]int{1, 0}}},
		{"json.Number", `{"num":1.50}`, decodeReq{Num: "1.50"}},
		{"nested unmarshaler", `{"wrapped":{"n":3}}`, decodeReq{Wrapped: &decodeWrapped{N: 3}}},
		{"embeddedStruct", `{"reference":"r1"}`, decodeReq{decodeBase: decodeBase{Reference: "r1"}}},
		{"untagged field", `{"Untagged":"u"}`, decodeReq{Untagged: "u"}},
		{"whitespace around", " \n{ \"amount\" : 1 }\n ", decodeReq{Amount: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got decodeReq
			if err := decodeJSON([]byte(tt.body), &got); err != nil {
				t.Fatalf("decodeJSON(%q) = %v", tt.body, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decodeJSON(%q) decoded\n%+v\nwant\n%+v", tt.body, got, tt.want)
			}
		})
	}
}

// decodeRefusal is one body that decodeJSON must refuse.
type decodeRefusal struct {
	name  string
	body  string
	code  string
	field string
	msg   string // a substring of the message, when it matters
}

// decodeRefusals lists a body for every rule of strict decoding.
var decodeRefusals = []decodeRefusal{
	// Not UTF-8, not JSON.
	{"invalid UTF-8 in string", "{\"currency\":\"\xff\"}", payd.ErrInvalidJSON, "body", "not valid UTF-8 at line 1, column 14 (byte offset 13)"},
	{"invalid UTF-8 outside", "\xc3{}", payd.ErrInvalidJSON, "body", "UTF-8"},
	{"UTF-8 surrogate bytes", "{\"currency\":\"\xed\xa0\x80\"}", payd.ErrInvalidJSON, "body", "UTF-8"},
	{"missing value", `{"amount":}`, payd.ErrInvalidJSON, "body", "missing value after object name at line 1, column 11 (byte offset 10)"},
	{"position on later line", "{\n  \"amount\": 1,\n  oops}", payd.ErrInvalidJSON, "body", "line 3, column 3 (byte offset 19)"},
	{"truncated", `{"amount":1`, payd.ErrInvalidJSON, "body", "body ends"},
	{"truncated string", `{"currency":"us`, payd.ErrInvalidJSON, "body", "body ends"},
	{"raw NUL", "{\"currency\":\"a\x00\"}", payd.ErrInvalidJSON, "body", "control character"},
	{"raw newline in string", "{\"currency\":\"a\nb\"}", payd.ErrInvalidJSON, "body", "control character"},
	{"bad escape", `{"currency":"\x"}`, payd.ErrInvalidJSON, "body", "escape"},
	{"short unicode escape", `{"currency":"\u12"}`, payd.ErrInvalidJSON, "body", "escape"},
	{"leading zero", `{"amount":01}`, payd.ErrInvalidJSON, "body", ""},
	{"bare fraction", `{"amount":1.}`, payd.ErrInvalidJSON, "body", "in number"},
	{"plus sign", `{"amount":+1}`, payd.ErrInvalidJSON, "body", ""},
	{"single quotes", `{'amount':1}`, payd.ErrInvalidJSON, "body", ""},
	{"trailing comma", `{"amount":1,}`, payd.ErrInvalidJSON, "body", ""},
	{"bad literal", `{"capture":tru}`, payd.ErrInvalidJSON, "body", ""},
	{"byte order mark", "\ufeff{}", payd.ErrInvalidJSON, "body", ""},
	{"syntax beats unknown field", `{"amout":1,`, payd.ErrInvalidJSON, "body", ""},
	{"syntax in non-object", `[1,`, payd.ErrInvalidJSON, "body", ""},

	// Top level and trailing data.
	{"array", `[]`, payd.ErrInvalidRequest, "body", "must be a JSON object, not an array"},
	{"string", `"x"`, payd.ErrInvalidRequest, "body", "not a string"},
	{"number", `1`, payd.ErrInvalidRequest, "body", "not a number"},
	{"null", `null`, payd.ErrInvalidRequest, "body", "not null"},
	{"boolean", `true`, payd.ErrInvalidRequest, "body", "not a boolean"},
	{"trailing garbage", `{} x`, payd.ErrInvalidRequest, "body", "more data after its JSON value at line 1, column 4"},
	{"two objects", `{}{}`, payd.ErrInvalidRequest, "body", "exactly one object"},
	{"extra brace", `{"amount":1}}`, payd.ErrInvalidRequest, "body", ""},
	{"trailing NUL", "{}\x00", payd.ErrInvalidRequest, "body", ""},

	// Duplicate keys.
	{"duplicate", `{"amount":1,"amount":2}`, payd.ErrInvalidRequest, "amount", `field "amount" appears more than once`},
	{"duplicate escaped", `{"amount":1,"\u0061mount":2}`, payd.ErrInvalidRequest, "amount", ""},
	{"duplicate in map", `{"metadata":{"order_id":"1","order_id":"2"}}`, payd.ErrInvalidRequest, "metadata.order_id", ""},
	{"duplicate in array", `{"items":[{"name":"a"},{"name":"b","name":"c"}]}`, payd.ErrInvalidRequest, "items.1.name", ""},
	{"duplicate in any", `{"any":{"a":1,"a":2}}`, payd.ErrInvalidRequest, "any.a", ""},
	{"duplicate in raw", `{"extra":[{"x":1,"x":1}]}`, payd.ErrInvalidRequest, "extra.0.x", ""},

	// Unknown fields.
	{"unknown", `{"amout":1}`, payd.ErrInvalidRequest, "amout", `unknown field "amout"`},
	{"unknown empty key", `{"":0}`, payd.ErrInvalidRequest, "body", `unknown field ""`},
	{"unknown nested", `{"customer":{"emial":"x"}}`, payd.ErrInvalidRequest, "customer.emial", `unknown field "customer.emial"`},
	{"unknown in array", `{"items":[{"name":"a"},{"nme":"b"}]}`, payd.ErrInvalidRequest, "items.1.nme", ""},
	{"case folded", `{"Amount":1}`, payd.ErrInvalidRequest, "Amount", ""},
	{"dash tag", `{"Internal":"x"}`, payd.ErrInvalidRequest, "Internal", ""},
	{"dash key", `{"-":"x"}`, payd.ErrInvalidRequest, "-", ""},
	{"unexported", `{"hidden":"x"}`, payd.ErrInvalidRequest, "hidden", ""},
	{"embeddedStruct struct name", `{"decodeBase":{}}`, payd.ErrInvalidRequest, "decodeBase", ""},
	{"first problem wins", `{"amout":1,"amount":"x"}`, payd.ErrInvalidRequest, "amout", ""},
	{"long unknown key shortened", `{"` + strings.Repeat("k", 100) + `":1}`, payd.ErrInvalidRequest, strings.Repeat("k", 64) + "…", ""},

	// Wrong types.
	{"string for integer", `{"amount":"12"}`, payd.ErrInvalidRequest, "amount", "field amount must be an integer, not a string"},
	{"fraction for integer", `{"amount":1.5}`, payd.ErrInvalidRequest, "amount", "without a fraction or exponent"},
	{"exponent for integer", `{"amount":1e2}`, payd.ErrInvalidRequest, "amount", "without a fraction or exponent"},
	{"point zero for integer", `{"amount":1.0}`, payd.ErrInvalidRequest, "amount", ""},
	{"above int64", `{"amount":9223372036854775808}`, payd.ErrInvalidRequest, "amount", "an integer from -9223372036854775808 to 9223372036854775807"},
	{"below int64", `{"amount":-9223372036854775809}`, payd.ErrInvalidRequest, "amount", ""},
	{"above int8", `{"small":128}`, payd.ErrInvalidRequest, "small", "from -128 to 127"},
	{"negative uint", `{"count":-1}`, payd.ErrInvalidRequest, "count", "from 0 to 4294967295"},
	{"minus zero uint", `{"count":-0}`, payd.ErrInvalidRequest, "count", ""},
	{"float overflow", `{"ratio":1e400}`, payd.ErrInvalidRequest, "ratio", ""},
	{"object for string", `{"currency":{}}`, payd.ErrInvalidRequest, "currency", "must be a string, not an object"},
	{"number for string", `{"currency":1}`, payd.ErrInvalidRequest, "currency", ""},
	{"array for object", `{"customer":[]}`, payd.ErrInvalidRequest, "customer", "must be an object or null, not an array"},
	{"string for boolean", `{"capture":"true"}`, payd.ErrInvalidRequest, "capture", "must be a boolean, not a string"},
	{"string for map", `{"metadata":"x"}`, payd.ErrInvalidRequest, "metadata", "an object"},
	{"number in map", `{"metadata":{"a":1}}`, payd.ErrInvalidRequest, "metadata.a", "field metadata.a must be a string, not a number"},
	{"wrong element", `{"items":[{"name":"a"},1]}`, payd.ErrInvalidRequest, "items.1", "an object"},
	{"deep wrong type", `{"items":[{"name":"a","qty":"2"}]}`, payd.ErrInvalidRequest, "items.0.qty", ""},
	{"object for array", `{"items":{}}`, payd.ErrInvalidRequest, "items", "an array"},
	{"not base64", `{"data":"!!"}`, payd.ErrInvalidRequest, "data", "base64"},
	{"byte out of range", `{"data":[256]}`, payd.ErrInvalidRequest, "data.0", "from 0 to 255"},
	{"text unmarshaler refuses", `{"level":"mid"}`, payd.ErrInvalidRequest, "level", "field level is not valid: the level must be low or high"},
	{"text unmarshaler number", `{"level":1}`, payd.ErrInvalidRequest, "level", "must be a string"},
	{"unmarshaler refuses", `{"code":"x"}`, payd.ErrInvalidRequest, "code", "code must be a string starting with c_"},
	{"unmarshaler nested in map key", `{"counts":{"x":1}}`, payd.ErrInvalidRequest, "counts.x", `key "x" of field counts`},
	{"nested encoding/json error", `{"wrapped":{"n":"x"}}`, payd.ErrInvalidRequest, "wrapped", "field wrapped is not valid"},
	{"quoted unquoted", `{"quoted":12}`, payd.ErrInvalidRequest, "quoted", "a string holding an integer"},
	{"quoted not a number", `{"quoted":"x"}`, payd.ErrInvalidRequest, "quoted", ""},
	{"quoted with space", `{"quoted":" 1"}`, payd.ErrInvalidRequest, "quoted", ""},
	{"quoted out of range", `{"quoted":"9223372036854775808"}`, payd.ErrInvalidRequest, "quoted", ""},
	{"array too long", `{"pair":[1,2,3]}`, payd.ErrInvalidRequest, "pair.2", "more elements than the 2 allowed"},
	{"array too long, object", `{"pair":[1,2,{"a":1,"a":2}]}`, payd.ErrInvalidRequest, "pair.2", "more elements"},
	{"wrong kind hides what is inside", `{"amount":{"":"","":null}}`, payd.ErrInvalidRequest, "amount", "must be an integer, not an object"},
	{"wrong kind hides NUL inside", `{"amount":["\u0000"]}`, payd.ErrInvalidRequest, "amount", "not an array"},
	{"quoted leading zero", `{"quoted":"00"}`, payd.ErrInvalidRequest, "quoted", "a string holding an integer"},
	{"string for json.Number", `{"num":"1"}`, payd.ErrInvalidRequest, "num", "a number"},

	// Null for fields that cannot be null.
	{"null integer", `{"amount":null}`, payd.ErrInvalidRequest, "amount", "must be an integer, not null"},
	{"null string", `{"currency":null}`, payd.ErrInvalidRequest, "currency", ""},
	{"null map", `{"metadata":null}`, payd.ErrInvalidRequest, "metadata", ""},
	{"null slice", `{"items":null}`, payd.ErrInvalidRequest, "items", ""},
	{"null element", `{"items":[null]}`, payd.ErrInvalidRequest, "items.0", ""},
	{"null map value", `{"metadata":{"a":null}}`, payd.ErrInvalidRequest, "metadata.a", ""},
	{"null text unmarshaler", `{"level":null}`, payd.ErrInvalidRequest, "level", ""},
	{"null unmarshaler decides", `{"code":null}`, payd.ErrInvalidRequest, "code", "starting with c_"},

	// Null characters.
	{"NUL in value", `{"currency":"a\u0000"}`, payd.ErrInvalidRequest, "currency", `field currency contains a null character`},
	{"NUL in map value", `{"metadata":{"k":"\u0000"}}`, payd.ErrInvalidRequest, "metadata.k", ""},
	{"NUL in map key", `{"metadata":{"a\u0000":"x"}}`, payd.ErrInvalidRequest, "metadata", "a key in field metadata contains a null character"},
	{"NUL in top key", `{"\u0000":1}`, payd.ErrInvalidRequest, "body", "a key in the request body"},
	{"NUL in raw", `{"extra":["\u0000"]}`, payd.ErrInvalidRequest, "extra.0", ""},
	{"NUL in any", `{"any":{"k":"\u0000"}}`, payd.ErrInvalidRequest, "any.k", ""},
	{"NUL in element", `{"items":[{"name":"\u0000"}]}`, payd.ErrInvalidRequest, "items.0.name", ""},
	{"NUL in quoted", `{"quoted":"\u0000"}`, payd.ErrInvalidRequest, "quoted", ""},
	{"NUL inside a value that decodes itself", `{"wrapped":{"n":"\u0000"}}`, payd.ErrInvalidRequest, "wrapped.n", "null character"},
	{"decoding method fails before a later NUL", `{"code":"x","\u0000":1}`, payd.ErrInvalidRequest, "code", "starting with c_"},

	// Unpaired surrogates.
	{"lone high", `{"currency":"\ud800"}`, payd.ErrInvalidRequest, "currency", "unpaired UTF-16 surrogate"},
	{"high then text", `{"currency":"\ud800x"}`, payd.ErrInvalidRequest, "currency", ""},
	{"lone low", `{"currency":"\udc00"}`, payd.ErrInvalidRequest, "currency", ""},
	{"two highs", `{"currency":"\ud800\ud800"}`, payd.ErrInvalidRequest, "currency", ""},
	{"high then BMP escape", `{"currency":"\ud800\u0041"}`, payd.ErrInvalidRequest, "currency", ""},
	{"low then high", `{"currency":"\udc00\ud800"}`, payd.ErrInvalidRequest, "currency", ""},
	{"high at end of pair run", `{"currency":"\ud83d\ude00\ud83d"}`, payd.ErrInvalidRequest, "currency", ""},
	{"uppercase hex", `{"currency":"\uD800"}`, payd.ErrInvalidRequest, "currency", ""},
	{"surrogate in key", `{"metadata":{"\ud800":"x"}}`, payd.ErrInvalidRequest, "metadata", "a key in field metadata"},
	{"surrogate in raw", `{"extra":"\udfff"}`, payd.ErrInvalidRequest, "extra", ""},

	// Depth.
	{"too deep", `{"any":` + strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth) + `}`, payd.ErrInvalidRequest, "body", "levels deep"},
}

// TestDecodeJSONRefuses checks every rule of strict decoding: the code, the
// field, and that messages speak JSON rather than Go.
func TestDecodeJSONRefuses(t *testing.T) {
	for _, tt := range decodeRefusals {
		t.Run(tt.name, func(t *testing.T) {
			var got decodeReq
			err := decodeJSON([]byte(tt.body), &got)
			var pe *payd.Error
			if !errors.As(err, &pe) {
				t.Fatalf("decodeJSON(%q) = %v, want a *payd.Error", tt.body, err)
			}
			if pe.Code != tt.code || pe.Field != tt.field {
				t.Errorf("decodeJSON(%q) = %q field %q (%s), want %q field %q", tt.body, pe.Code, pe.Field, pe.Message, tt.code, tt.field)
			}
			if !strings.Contains(pe.Message, tt.msg) {
				t.Errorf("decodeJSON(%q) message %q, want it to contain %q", tt.body, pe.Message, tt.msg)
			}
			for _, goName := range []string{"int64", "int8", "uint32", "float64", "decodeReq", "api.", "map[", "reflect", "json:", "Go "} {
				if strings.Contains(pe.Message, goName) {
					t.Errorf("decodeJSON(%q) message %q leaks the Go name %q", tt.body, pe.Message, goName)
				}
			}
		})
	}
}

// TestDecodeJSONDepthLimit checks that the deepest allowed nesting decodes.
func TestDecodeJSONDepthLimit(t *testing.T) {
	n := maxJSONDepth - 1 // the body's own object is the first level
	body := `{"any":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
	var got decodeReq
	if err := decodeJSON([]byte(body), &got); err != nil {
		t.Fatalf("decodeJSON at depth %d: %v", maxJSONDepth, err)
	}
}

// TestDecodeJSONNeedsPointer checks that a programming mistake is an
// internal error (a 500 with a log line), not a client error.
func TestDecodeJSONNeedsPointer(t *testing.T) {
	var req decodeReq
	var nilReq *decodeReq
	for _, dst := range []any{req, nilReq, nil} {
		err := decodeJSON([]byte(`{}`), dst)
		if err == nil || payd.ErrorCode(err) != payd.ErrInternal {
			t.Errorf("decodeJSON into %T = %v, want an internal error", dst, err)
		}
	}
}

// embedA and embedB both promote X at the same depth, which encoding/json
// resolves by dropping X; Y is tagged in embedB and so wins. EmbedInner is
// exported so that encoding/json can allocate it; embedInner is not.
type (
	embedA struct{ X, Y int }
	embedB struct {
		X int
		Y int `json:"Y"`
	}
	EmbedInner struct{ Z int }
	embedInner struct{ W int }
	embedPtr   struct {
		*EmbedInner
		*embedInner
		embedA
		embedB
	}
	embedCycle struct {
		Next *embedCycle `json:"next"`
		V    int         `json:"v"`
	}
)

// TestDecodeJSONFieldRules checks encoding/json's embedding rules and a
// recursive type against the strict decoder.
func TestDecodeJSONFieldRules(t *testing.T) {
	var e embedPtr
	if err := decodeJSON([]byte(`{"Y":2,"Z":3}`), &e); err != nil || e.embedB.Y != 2 || e.Z != 3 {
		t.Errorf("decodeJSON embeddedStruct = %v, %+v", err, e)
	}
	if err := decodeJSON([]byte(`{"X":1}`), &e); payd.ErrorCode(err) != payd.ErrInvalidRequest {
		t.Errorf("decodeJSON ambiguous X = %v, want invalid_request", err)
	}
	// encoding/json cannot allocate an embedded pointer to an unexported
	// struct, so its fields are refused rather than silently dropped.
	if err := decodeJSON([]byte(`{"W":1}`), &e); payd.ErrorCode(err) != payd.ErrInvalidRequest {
		t.Errorf("decodeJSON through unexported pointer = %v, want invalid_request", err)
	}
	var c embedCycle
	err := decodeJSON([]byte(`{"next":{"next":{"v":3,"w":1}}}`), &c)
	if pe := (*payd.Error)(nil); !errors.As(err, &pe) || pe.Field != "next.next.w" {
		t.Errorf("decodeJSON recursive = %v, want unknown next.next.w", err)
	}
}

// FuzzDecodeJSON checks that decodeJSON never panics, refuses only with
// payd errors, and accepts nothing that encoding/json (with unknown fields
// disallowed) would refuse or decode differently.
func FuzzDecodeJSON(f *testing.F) {
	for _, tt := range decodeRefusals {
		f.Add([]byte(tt.body))
	}
	f.Add([]byte(`{"amount":1,"currency":"usd","metadata":{"a":"b"},"items":[{"name":"x","qty":2}],"customer":{"email":"e","name":null}}`))
	f.Add([]byte(`{"extra":{"a":[1,{"b":null}]},"any":[1.5,"\ud83d\ude00",true],"data":"aGk=","code":"c_1","level":"low"}`))
	f.Add([]byte(`{"quoted":"12","counts":{"7":1},"pair":[1],"num":-0.5e-3,"reference":"r","Untagged":"","wrapped":{"n":1}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var got decodeReq
		err := decodeJSON(body, &got)
		if err != nil {
			checkRefusal(t, body, err)
			return
		}
		std := body
		if isBlankJSON(body) {
			std = []byte("{}")
		}
		var want decodeReq
		dec := json.NewDecoder(bytes.NewReader(std))
		dec.UseNumber()
		dec.DisallowUnknownFields()
		if err := dec.Decode(&want); err != nil || !json.Valid(std) {
			t.Fatalf("decodeJSON accepted %q, which encoding/json refuses: %v", body, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeJSON(%q) = %+v, encoding/json = %+v", body, got, want)
		}
	})
}

// checkRefusal checks one refusal seen by the fuzzer.
func checkRefusal(t *testing.T, body []byte, err error) {
	t.Helper()
	var pe *payd.Error
	if !errors.As(err, &pe) || pe.Field == "" || pe.Message == "" {
		t.Fatalf("decodeJSON(%q) = %#v, want a payd error with a field and message", body, err)
	}
	switch pe.Code {
	case payd.ErrInvalidJSON:
		if json.Valid(body) && utf8.Valid(body) {
			t.Fatalf("decodeJSON(%q) = invalid_json for valid JSON: %s", body, pe.Message)
		}
	case payd.ErrInvalidRequest:
		if pe.Message == "the request body could not be decoded" {
			t.Fatalf("decodeJSON(%q): the strict check passed a body encoding/json refused", body)
		}
	default:
		t.Fatalf("decodeJSON(%q) = code %q", body, pe.Code)
	}
}

// BenchmarkDecodeJSON measures a typical create request.
func BenchmarkDecodeJSON(b *testing.B) {
	body := []byte(`{"amount":1999,"currency":"usd","reference":"order-1234","metadata":{"order_id":"1234","channel":"web"},
		"items":[{"name":"T-shirt","qty":2},{"name":"Socks","qty":1}],"customer":{"email":"ann@example.com","name":"Ann"}}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var req decodeReq
		if err := decodeJSON(body, &req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeJSONHostile measures 1 MiB bodies built to be slow: each
// must stay linear in its size (deep paths with many errors once were not).
func BenchmarkDecodeJSONHostile(b *testing.B) {
	const mib = 1 << 20
	deep := maxJSONDepth - 1
	bodies := map[string]string{
		"many keys":   `{"metadata":{` + strings.Repeat(`"k":"v",`, mib/8) + `"z":"v"}}`,
		"deep errors": `{"any":` + strings.Repeat("[", deep) + strings.Repeat(`"\u0000",`, mib/10) + `1` + strings.Repeat("]", deep) + `}`,
		"unknown":     `{` + strings.Repeat(`"amout":1,`, mib/10) + `"a":1}`,
		"escapes":     `{"currency":"` + strings.Repeat(`\ud83d\ude00`, mib/12) + `"}`,
		"items":       `{"items":[` + strings.Repeat(`{"name":"x","qty":1},`, mib/21) + `{"name":"x"}]}`,
		"long key":    `{"` + strings.Repeat("k", mib) + `":1}`,
	}
	for name, body := range bodies {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var req decodeReq
				_ = decodeJSON([]byte(body), &req)
			}
		})
	}
}

// BenchmarkDecodeJSONWire measures the wire types on representative bodies:
// a payment and a checkout create, and a payment with 50 long metadata values.
func BenchmarkDecodeJSONWire(b *testing.B) {
	var meta strings.Builder
	meta.WriteString(`{"amount":1999,"currency":"usd","metadata":{`)
	for i := range 50 {
		if i > 0 {
			meta.WriteByte(',')
		}
		meta.WriteString(`"key_` + strconv.Itoa(i) + `":"` + strings.Repeat("v", 400) + `"`)
	}
	meta.WriteString(`}}`)
	bodies := []struct {
		name string
		body string
		dst  func() any
	}{
		{"payment", `{"amount":1999,"currency":"usd","description":"Order 1234","reference":"order-1234","metadata":{"order_id":"1234","channel":"web"},"customer_email":"ann@example.com","customer_name":"Ann","success_url":"https://shop.example/ok","cancel_url":"https://shop.example/cancel","fee_payer":"merchant"}`,
			func() any { return new(createPaymentRequest) }},
		{"checkout", `{"payment_id":"pay_01J9ZQ7X3M4K","rail":"crypto","asset":"usdc","network":"ethereum","email":"ann@example.com"}`,
			func() any { return new(createCheckoutRequest) }},
		{"metadata", meta.String(), func() any { return new(createPaymentRequest) }},
	}
	for _, bb := range bodies {
		b.Run(bb.name, func(b *testing.B) {
			body := []byte(bb.body)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := decodeJSON(body, bb.dst()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
