package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"payd"
)

// single is the envelope of a one-object response (spec 2.1).
type single struct {
	Data any `json:"data"`
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeJSON writes v as compact JSON with an exact Content-Length. Encoding
// first means a value that cannot be encoded becomes a clean 500 rather
// than half a response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := encodeJSON(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"code":"internal_error","message":"the response could not be encoded","request_id":""}}`)
	}
	writeRaw(w, status, "application/json", body)
}

// encodeJSON is how every response body is encoded: compact, and with <, >
// and & left as they are (the API serves JSON, not HTML).
func encodeJSON(v any) ([]byte, error) {
	buf := bufPool.Get().(*bytes.Buffer)
	defer func() { buf.Reset(); bufPool.Put(buf) }()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()[:buf.Len()-1]), nil // without Encode's newline
}

// writeRaw writes a prepared body.
func writeRaw(w http.ResponseWriter, status int, contentType string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeTx runs a handler's change in one transaction and answers
// {"data": v} with status. When the request holds an Idempotency-Key, the
// response is stored in that same transaction: the change and its replay
// commit together or not at all, which costs SQLite's single writer one job
// fewer than storing the response afterwards and leaves no window in which
// a crash could keep the change but lose the response. Handlers that write
// should answer through it.
func (s *Server) writeTx(w http.ResponseWriter, r *http.Request, status int, fn func(ctx context.Context, q payd.Queries) (any, error)) error {
	c := callOf(r.Context())
	var body []byte
	err := s.store.Tx(r.Context(), func(ctx context.Context, q payd.Queries) error {
		v, err := fn(ctx, q)
		if err != nil {
			return err
		}
		if body, err = encodeJSON(single{v}); err != nil {
			return err
		}
		if c.claim == nil {
			return nil
		}
		err = q.CompleteIdempotencyKey(ctx, c.claim, status, "application/json", body)
		if payd.IsNotFound(err) && c.deferred {
			// A stored request is being retried: undo this run, answer that one.
			held, err := s.storedRecord(ctx, q, c.claim, c.claim.CreatedAt)
			if err == nil && held != nil {
				return errHeld{held}
			}
			return errors.Join(err, errors.New("api: a held Idempotency-Key has no stored record"))
		}
		if payd.IsNotFound(err) {
			// The claim lapsed and another request took the key over: this
			// one must not commit its change beside that one.
			return &payd.Error{Code: payd.ErrIdempotencyKeyInUse, RetryAfter: time.Second,
				Message: "another request took over this Idempotency-Key; retry to see its result"}
		}
		return err
	})
	if err != nil {
		return err
	}
	c.stored = c.claim != nil
	writeRaw(w, status, "application/json", body)
	return nil
}
