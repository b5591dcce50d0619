package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"time"

	"payd"
	"payd/clock"
)

// maxBody is the request body limit (spec 8.1).
const maxBody = 1 << 20

// call is what the common chain learns about a request, for the handler.
type call struct {
	id string
	// start is wall time, not the service clock: the test clock may jump
	// during a request, and the access log reports how long it really took.
	start time.Time
	body  []byte
	key   *payd.APIKey   // nil on public routes called without a key
	biz   *payd.Business // the key's business, or the one a session acts for
	// session and user are the signed-in person of a cookie-signed
	// request; role is their role in biz. key is then a stand-in holding
	// the role's permissions, with no id.
	session *payd.Session
	user    *payd.User
	role    payd.MemberRole
	// claim is the Idempotency-Key this request holds, if any; stored
	// says that writeTx has already stored the response with the change;
	// deferred that no stored record was looked for before the handler
	// ran (see Server.idempotent).
	claim    *payd.IdempotencyRecord
	stored   bool
	deferred bool
}

type callKey struct{}

// callOf returns the request's call; handlers always run inside wrap.
func callOf(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil {
		return &call{}
	}
	return c
}

// requestID returns the request's Service-Request-Id.
func requestID(ctx context.Context) string { return callOf(ctx).id }

// wrap applies the common chain to a route: request id, panic recovery,
// access log, rate limit, authentication, body limits, pauses, idempotency.
func (s *Server) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &call{id: payd.NewID(payd.PrefixRequest), start: clock.Real{}.Now()}
		h := w.Header()
		h.Set("Service-Request-Id", c.id)
		// Answers are per caller and per moment (keys, balances, secrets):
		// no cache may keep one, and no browser may read one as anything but
		// JSON. Set first, so errors, buffered and replayed answers carry
		// them too.
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		r = r.WithContext(context.WithValue(r.Context(), callKey{}, c))
		sw := &statusWriter{ResponseWriter: w}
		defer s.logRequest(sw, r, c)
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.writeError(sw, r, fmt.Errorf("panic: %v\n%s", p, debug.Stack()))
			}
		}()
		if err := s.serve(sw, r, c, rt); err != nil {
			s.writeError(sw, r, err)
		}
	})
}

// serve runs the checks in order, then the handler.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, c *call, rt route) error {
	if err := s.limiter.allow(r.Context(), rt.limit, s.clientIP(r)); err != nil {
		return err
	}
	if err := s.authenticate(r, c, rt); err != nil {
		return err
	}
	if err := readBody(r, c); err != nil {
		return err
	}
	if err := s.pauses.check(r.Context(), rt.pause); err != nil {
		return err
	}
	if rt.method == http.MethodPost && rt.idem != idemIgnored {
		return s.idempotent(w, r, c, rt)
	}
	return rt.h(w, r)
}

// readBody reads the whole body up to the limit, so that handlers decode
// from memory and idempotency can hash exactly what was sent.
func readBody(r *http.Request, c *call) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	if r.ContentLength > maxBody {
		return payd.Errorf(payd.ErrPayloadTooLarge, "the request body is larger than 1 MiB")
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return payd.Errorf(payd.ErrInvalidRequest, "the request body could not be read")
	}
	if len(b) > maxBody {
		return payd.Errorf(payd.ErrPayloadTooLarge, "the request body is larger than 1 MiB")
	}
	if len(bytes.TrimSpace(b)) > 0 && !isJSON(r.Header.Get("Content-Type")) {
		return payd.Errorf(payd.ErrUnsupportedMediaType, "send the body as JSON with Content-Type: application/json")
	}
	c.body = b
	return nil
}

// isJSON accepts application/json with no charset or UTF-8.
func isJSON(ct string) bool {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || cs == "utf-8" || cs == "UTF-8"
}

// decode reads the request's JSON body strictly into dst.
func decode(r *http.Request, dst any) error {
	return decodeJSON(callOf(r.Context()).body, dst)
}

// statusWriter remembers the status for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// logRequest writes the access log line.
func (s *Server) logRequest(w *statusWriter, r *http.Request, c *call) {
	level := slog.LevelInfo
	if w.status >= 500 {
		level = slog.LevelError
	}
	if !s.log.Enabled(r.Context(), level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("request_id", c.id), slog.String("method", r.Method),
		slog.String("path", r.URL.Path), slog.Int("status", w.status),
		slog.Duration("duration", clock.Real{}.Now().Sub(c.start)),
	}
	if c.biz != nil {
		attrs = append(attrs, slog.String("business", c.biz.ID))
	}
	s.log.LogAttrs(r.Context(), level, "request", attrs...)
}
