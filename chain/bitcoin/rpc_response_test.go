package bitcoin

import (
	"bytes"
	"encoding/json"
	"testing"
)

// responseSeeds are answers as nodes give them, and near misses.
var responseSeeds = []string{
	`{"result":"0100000001","error":null,"id":1}`,
	"{\"result\":\"00ff\",\"error\":null,\"id\":18446744073709551615}\n",
	`{"result":"","error":null,"id":7}`,
	`{"result":"abc","error":null,"id":01}`,
	`{"result":"abc","error":null,"id":-1}`,
	`{"result":"abc","error":null,"id":1}x`,
	`{"result":"abc","error":null,"id":1,"result":"00"}`,
	`{"result":"ab\u0063","error":null,"id":1}`,
	`{"result":null,"error":{"code":-5,"message":"Block not found"},"id":3}`,
	`{"result":{"chain":"regtest"},"error":null,"id":2}`,
	`{"result":"abc","error":null,"id":1.5}`,
}

// TestDecodeResponse checks that the hex shortcut decodes answers as
// encoding/json does, and is taken for a raw block's answer.
func TestDecodeResponse(t *testing.T) {
	for _, s := range responseSeeds {
		checkResponse(t, []byte(s))
	}
	if _, ok := hexResponse([]byte(responseSeeds[0])); !ok {
		t.Fatalf("the shortcut refused %s", responseSeeds[0])
	}
}

// FuzzDecodeResponse checks decodeResponse against encoding/json on any
// answer.
func FuzzDecodeResponse(f *testing.F) {
	for _, s := range responseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkResponse(t, body) })
}

// checkResponse fails unless decodeResponse agrees with json.Unmarshal on
// body: the same error or none, and the same response.
func checkResponse(t *testing.T, body []byte) {
	t.Helper()
	var want response
	werr := json.Unmarshal(body, &want)
	got, err := decodeResponse(body)
	if (err != nil) != (werr != nil) {
		t.Fatalf("%q: error %v, encoding/json %v", body, err, werr)
	}
	if err != nil {
		return
	}
	if !bytes.Equal(got.Result, want.Result) || got.ID != want.ID || (got.Error == nil) != (want.Error == nil) ||
		(got.Error != nil && *got.Error != *want.Error) {
		t.Fatalf("%q: %+v, encoding/json %+v", body, got, want)
	}
}
