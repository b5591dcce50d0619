package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"time"

	"payd"
)

const (
	// idemWindow is how long a 2xx response is replayed (spec 4.8 rule 2).
	idemWindow = 24 * time.Hour
	// idemLease bounds how long a running first request blocks its retries;
	// it outlasts the server's write timeout, so only a claim left by a
	// process that died ever lapses.
	idemLease = 2 * time.Minute
)

// idempotent runs a POST under its Idempotency-Key (spec 4.8): the first
// request claims the key, a 2xx response is stored and replayed byte for
// byte, an error frees the key.
//
// A route marked inTx changes nothing outside writeTx, which writes the
// record once, with the response, in the change's own transaction, by the
// atomic upsert of CompleteIdempotencyKey: it refuses to store over a key
// another request (of this process or another replica) holds, and then
// the change is rolled back and the stored answer replayed (errHeld). So
// such a route neither claims the key in the database nor reads the record
// before its handler runs: most keys are new, and on SQLite that claim and
// that read were the chain's largest costs, on PostgreSQL a commit of its
// own (docs/benchmarks.md). While it runs, the claim is held in memory,
// so a retry to the same process waits for it rather than running beside
// it. A handler that fails first reads the record then, so a retry is
// replayed even when running it again would now fail.
//
// Other routes claim the key before the handler runs, where others who
// serve the database see it: on PostgreSQL, which replicas share, with one
// atomic insert; on SQLite, which one process serves, in memory, after
// reading any stored record, and the response is stored by the same
// refusing upsert.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, c *call, rt route) error {
	values := r.Header.Values("Idempotency-Key")
	if len(values) == 0 {
		if rt.idem == idemRequired {
			return payd.Errorf(payd.ErrIdempotencyKeyRequired, "this request needs an Idempotency-Key header")
		}
		return rt.h(w, r)
	}
	if len(values) > 1 || !validIdemKey(values[0]) {
		return &payd.Error{Code: payd.ErrInvalidRequest, Field: "Idempotency-Key",
			Message: "Idempotency-Key must be one header of 1 to 255 visible ASCII characters"}
	}
	now := s.clock.Now()
	rec := &payd.IdempotencyRecord{
		Scope: idemScope(r, c), Key: values[0], Method: r.Method, Path: r.URL.Path,
		BodyHash: hashHex(c.body), CreatedAt: now, LockedUntil: now.Add(idemLease), ExpiresAt: now.Add(idemWindow),
	}
	held, err := s.claim(r.Context(), rec, now, c, rt)
	if err != nil {
		return err
	}
	if held != nil {
		return replay(w, held, rec)
	}
	defer s.memory.drop(rec)
	return s.runClaimed(w, r, rt, rec)
}

// claim takes rec's key, or returns the record that holds it. Outside the
// database the memory claim is taken before the database is read: a
// request that held the key keeps it until its record is committed, so
// whoever takes the key after it is gone finds that record. An inTx route
// skips the read (c.deferred; see idempotent).
func (s *Server) claim(ctx context.Context, rec *payd.IdempotencyRecord, now time.Time, c *call, rt route) (*payd.IdempotencyRecord, error) {
	if s.sharedClaims && !rt.inTx {
		return s.store.ClaimIdempotencyKey(ctx, rec, now)
	}
	if held := s.memory.take(rec); held != nil {
		return held, nil
	}
	if rt.inTx {
		c.deferred = true
		return nil, nil
	}
	held, err := s.storedRecord(ctx, s.store, rec, now)
	if held != nil || err != nil {
		s.memory.drop(rec)
	}
	return held, err
}

// storedRecord reads the record that holds rec's key through q; nil when
// none does.
func (s *Server) storedRecord(ctx context.Context, q payd.IdempotencyStore, rec *payd.IdempotencyRecord, now time.Time) (*payd.IdempotencyRecord, error) {
	held, err := q.IdempotencyRecord(ctx, rec.Scope, rec.Key)
	if payd.IsNotFound(err) || (err == nil && !holds(held, now)) {
		return nil, nil
	}
	return held, err
}

// errHeld says a deferred claim's key turned out to be held by a stored
// record; the request is answered from it (see idempotent).
type errHeld struct{ rec *payd.IdempotencyRecord }

func (e errHeld) Error() string { return "api: the Idempotency-Key is held by a stored record" }

// holds reports whether a stored record still holds its key at now: a
// response within its 24 hours, or a claim whose lease has not lapsed.
func holds(rec *payd.IdempotencyRecord, now time.Time) bool {
	return now.Before(rec.ExpiresAt) && (rec.Status != 0 || now.Before(rec.LockedUntil))
}

// memoryClaims are the keys this process's requests hold while they run
// (all of them on SQLite, those of inTx routes on PostgreSQL; see idempotent).
type memoryClaims struct {
	mu   sync.Mutex
	held map[[2]string]*payd.IdempotencyRecord
}

// take claims rec's key, or returns the running claim that holds it.
func (m *memoryClaims) take(rec *payd.IdempotencyRecord) *payd.IdempotencyRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{rec.Scope, rec.Key}
	if held := m.held[k]; held != nil {
		return held
	}
	if m.held == nil {
		m.held = map[[2]string]*payd.IdempotencyRecord{}
	}
	m.held[k] = rec
	return nil
}

// drop ends rec's claim once its request is over; by then a 2xx response
// is in the database.
func (m *memoryClaims) drop(rec *payd.IdempotencyRecord) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{rec.Scope, rec.Key}
	if m.held[k] == rec {
		delete(m.held, k)
	}
}

// idemScope is the business for keyed calls (rule 6); a keyless call is
// stored under its key and body together (rule 7), so the same key with
// another body is simply another request.
func idemScope(r *http.Request, c *call) string {
	if c.biz != nil {
		return c.biz.ID
	}
	if c.user != nil {
		return "user:" + c.user.ID
	}
	return "public:" + hashHex([]byte(r.URL.Path+"\n"+hashHex(c.body)))
}

// replay answers a retry from the record that holds its key.
func replay(w http.ResponseWriter, held, rec *payd.IdempotencyRecord) error {
	if held.Method != rec.Method || held.Path != rec.Path || held.BodyHash != rec.BodyHash {
		return payd.Errorf(payd.ErrIdempotencyKeyReused, "this Idempotency-Key was used for a different request; use a fresh key")
	}
	if held.Status == 0 {
		return &payd.Error{Code: payd.ErrIdempotencyKeyInUse, RetryAfter: time.Second,
			Message: "the first request with this Idempotency-Key is still running; retry shortly"}
	}
	w.Header().Set("Idempotent-Replayed", "true")
	writeRaw(w, held.Status, held.ContentType, held.Body)
	return nil
}

// runClaimed runs the handler into a buffer, stores a 2xx response before
// the client sees it (so a retry after any answer is a replay), and frees
// the key on an error or a panic.
func (s *Server) runClaimed(w http.ResponseWriter, r *http.Request, rt route, rec *payd.IdempotencyRecord) (err error) {
	buf := &bufferedWriter{header: w.Header(), body: new(bytes.Buffer)}
	c := callOf(r.Context())
	c.claim = rec
	done := false
	defer func() {
		if !done {
			s.release(r, rec)
		}
	}()
	before := w.Header().Clone()
	err = rt.h(buf, r)
	if held, herr := s.heldAfter(r.Context(), c, rec, err, buf.status); held != nil || herr != nil {
		if herr != nil {
			return herr
		}
		done = true
		clear(w.Header())
		maps.Copy(w.Header(), before)
		return replay(w, held, rec)
	}
	if err != nil {
		return err
	}
	if buf.status < 200 || buf.status > 299 {
		s.release(r, rec)
	} else if c.stored {
		// writeTx stored the response in the change's own transaction.
	} else if err := s.store.CompleteIdempotencyKey(r.Context(), rec, buf.status, w.Header().Get("Content-Type"), buf.body.Bytes()); err != nil {
		// The change committed; answer it. The claim stays locked until its
		// lease lapses, so a quick retry gets in_use rather than a second run.
		s.log.ErrorContext(r.Context(), "storing idempotent response", slog.String("request_id", requestID(r.Context())), slog.Any("error", err))
	}
	done = true
	w.WriteHeader(buf.status)
	_, _ = w.Write(buf.body.Bytes())
	return nil
}

// heldAfter finds, once a deferred claim's handler has run, the stored
// record that holds its key: the one writeTx met (errHeld), or, when the
// handler failed before storing anything, the one a read finds. A request
// that stored its own response, or whose claim was not deferred, has none.
func (s *Server) heldAfter(ctx context.Context, c *call, rec *payd.IdempotencyRecord, err error, status int) (*payd.IdempotencyRecord, error) {
	var h errHeld
	if errors.As(err, &h) {
		return h.rec, nil
	}
	if !c.deferred || c.stored || (err == nil && status >= 200 && status <= 299) {
		return nil, nil
	}
	return s.storedRecord(ctx, s.store, rec, rec.CreatedAt)
}

// release frees a key claimed in the database; a failure only delays a
// retry until the lease lapses. A claim held in memory ends with its
// request (drop).
func (s *Server) release(r *http.Request, rec *payd.IdempotencyRecord) {
	if !s.sharedClaims || callOf(r.Context()).deferred {
		return
	}
	if err := s.store.ReleaseIdempotencyKey(r.Context(), rec); err != nil {
		s.log.ErrorContext(r.Context(), "releasing idempotency key", slog.String("request_id", requestID(r.Context())), slog.Any("error", err))
	}
}

// validIdemKey checks rule 1's length and keeps keys printable.
func validIdemKey(k string) bool {
	if len(k) < 1 || len(k) > 255 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

func hashHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// bufferedWriter holds a handler's response until it has been stored.
type bufferedWriter struct {
	header http.Header
	status int
	body   *bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
