package api

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"payd"
)

// outcome summarises what a decoder did with a body.
func outcome(decode func([]byte, any) error, body []byte) string {
	var got decodeReq
	err := decode(body, &got)
	if err == nil {
		return "ok"
	}
	var pe *payd.Error
	if !errors.As(err, &pe) {
		return "non-payd " + err.Error()
	}
	return pe.Code + " " + pe.Field
}

// differs reports the two outcomes when they differ.
func differs(body []byte) (string, string, bool) {
	a, b := outcome(oldDecodeJSON, body), outcome(decodeJSON, body)
	if a == b && strings.HasPrefix(a, "ok") {
		var x, y decodeReq
		_ = oldDecodeJSON(body, &x)
		_ = decodeJSON(body, &y)
		if !reflect.DeepEqual(x, y) {
			return a, b, true
		}
	}
	return a, b, a != b
}

func TestDecodeJSONv2Differential(t *testing.T) {
	var bodies [][]byte
	for _, tt := range decodeRefusals {
		bodies = append(bodies, []byte(tt.body))
	}
	files, _ := filepath.Glob("testdata/fuzz/FuzzDecodeJSON*/*")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		lines := strings.Split(string(b), "\n")
		if len(lines) < 2 {
			continue
		}
		s := strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")")
		v, err := strconv.Unquote(s)
		if err != nil {
			continue
		}
		bodies = append(bodies, []byte(v))
	}
	for _, body := range bodies {
		if a, b, d := differs(body); d {
			t.Errorf("%q:\n  old %s\n  v2  %s", body, a, b)
		}
	}
}

func FuzzDecodeJSONDifferential(f *testing.F) {
	for _, tt := range decodeRefusals {
		f.Add([]byte(tt.body))
	}
	f.Add([]byte(`{"amount":1,"currency":"usd","metadata":{"a":"b"},"items":[{"name":"x","qty":2}],"customer":{"email":"e","name":null}}`))
	f.Add([]byte(`{"extra":{"a":[1,{"b":null}]},"any":[1.5,"\ud83d\ude00",true],"data":"aGk=","code":"c_1","level":"low"}`))
	f.Add([]byte(`{"quoted":"12","counts":{"7":1},"pair":[1],"num":-0.5e-3,"reference":"r","Untagged":"","wrapped":{"n":1}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if a, b, d := differs(body); d {
			t.Fatalf("%q:\n  old %s\n  v2  %s", body, a, b)
		}
	})
}

// BenchmarkDecodeCompare measures both decoders on representative bodies.
func BenchmarkDecodeCompare(b *testing.B) {
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
	for _, impl := range []struct {
		name string
		fn   func([]byte, any) error
	}{{"old", oldDecodeJSON}, {"v2", decodeJSON}} {
		for _, bb := range bodies {
			b.Run(impl.name+"/"+bb.name, func(b *testing.B) {
				body := []byte(bb.body)
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if err := impl.fn(body, bb.dst()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
