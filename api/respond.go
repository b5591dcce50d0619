package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
)

// single is the envelope of a one-object response (spec 2.1).
type single struct {
	Data any `json:"data"`
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeJSON writes v as compact JSON with an exact Content-Length. Encoding
// into a buffer first means a value that cannot be encoded becomes a clean
// 500 rather than half a response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := bufPool.Get().(*bytes.Buffer)
	defer func() { buf.Reset(); bufPool.Put(buf) }()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"code":"internal_error","message":"the response could not be encoded","request_id":""}}`)
	} else {
		buf.Truncate(buf.Len() - 1) // Encode's trailing newline.
	}
	writeRaw(w, status, "application/json", buf.Bytes())
}

// writeRaw writes a prepared body.
func writeRaw(w http.ResponseWriter, status int, contentType string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
