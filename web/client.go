package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
)

// client calls the JSON API in the same process, through its http.Handler.
// The pages are one more client of the public API: every rule (what a link
// offers, whether a checkout may open, its rate limit, pauses and
// idempotency) stays in the API and the domain, and the pages only render
// what the API answers.
type client struct {
	api     http.Handler
	apiBase string // api.BasePath
}

// apiError is an error answered by the API (spec 7).
type apiError struct {
	Status  int
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field"`
	// RetryAfter is the answer's Retry-After header (seconds), if any.
	RetryAfter string `json:"-"`
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

// recorder is the smallest http.ResponseWriter that keeps what the API
// wrote.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

// call sends one request to the API on behalf of the customer's request
// orig: the peer address and forwarding headers travel with it so that the
// API's per-IP limits count the customer, not the page. A 2xx answer's
// data is decoded into out; any other answer is an *apiError.
func (c client) call(orig *http.Request, method, path string, body any, header http.Header, out any) error {
	_, err := c.send(orig, method, path, body, header, out)
	return err
}

// send is call that also returns the API's response headers, which the
// dashboard passes on (Set-Cookie, Retry-After).
func (c client) send(orig *http.Request, method, path string, body any, header http.Header, out any) (http.Header, error) {
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequestWithContext(orig.Context(), method, c.apiBase+path, rd)
	if err != nil {
		return nil, err
	}
	req.RemoteAddr = orig.RemoteAddr
	req.Host = orig.Host
	req.TLS = orig.TLS
	for _, k := range []string{"X-Forwarded-For", "User-Agent", "Accept-Language"} {
		if v := orig.Header.Values(k); len(v) > 0 {
			req.Header[k] = v
		}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := &recorder{header: http.Header{}}
	c.api.ServeHTTP(rec, req)
	if rec.status >= 200 && rec.status < 300 {
		if out == nil || rec.status == http.StatusNoContent {
			return rec.header, nil
		}
		if w, ok := out.(whole); ok {
			return rec.header, json.Unmarshal(rec.body.Bytes(), w.v)
		}
		env := struct {
			Data any `json:"data"`
		}{out}
		return rec.header, json.Unmarshal(rec.body.Bytes(), &env)
	}
	var eb struct {
		Error apiError `json:"error"`
	}
	if err := json.Unmarshal(rec.body.Bytes(), &eb); err != nil || eb.Error.Code == "" {
		eb.Error = apiError{Code: "internal_error", Message: http.StatusText(rec.status)}
	}
	eb.Error.Status = rec.status
	eb.Error.RetryAfter = rec.header.Get("Retry-After")
	return rec.header, &eb.Error
}

// whole, passed as call's out, decodes the whole answer into v rather
// than its data: a list's envelope with has_more and next_cursor.
type whole struct{ v any }

// publicLink reads GET /public/links/{code}.
func (c client) publicLink(r *http.Request, code string) (*publicLink, error) {
	var l publicLink
	return &l, c.call(r, "GET", "/public/links/"+url.PathEscape(code), nil, nil, &l)
}

// publicPayment reads GET /public/payments/{code}.
func (c client) publicPayment(r *http.Request, code string) (*publicPayment, error) {
	var p publicPayment
	return &p, c.call(r, "GET", "/public/payments/"+url.PathEscape(code), nil, nil, &p)
}

// checkout reads GET /checkouts/{id} for the page named by page.
func (c client) checkout(r *http.Request, id string, page pageOf) (*checkout, error) {
	var ch checkout
	q := url.Values{page.param(): {page.code}}
	return &ch, c.call(r, "GET", "/checkouts/"+url.PathEscape(id)+"?"+q.Encode(), nil, nil, &ch)
}

// pageOf names the page a checkout is read for, a link's or a payment's by
// its code: the API answers not_found for a checkout of another link or
// payment, so that no page shows a checkout it does not sell.
type pageOf struct {
	link bool
	code string
}

func (p pageOf) param() string {
	if p.link {
		return "link_code"
	}
	return "payment_code"
}

// openCheckout sends POST /checkouts under the page's idempotency key, so a
// form submitted twice opens one checkout.
func (c client) openCheckout(r *http.Request, body openRequest, idemKey string) (*checkout, error) {
	var ch checkout
	h := http.Header{"Idempotency-Key": {idemKey}}
	return &ch, c.call(r, "POST", "/checkouts", body, h, &ch)
}

// openRemainder sends POST /checkouts/{id}/remainder under the page's
// idempotency key: a new quote for what an underpaid payment still lacks,
// once the quote of checkout id has ended.
func (c client) openRemainder(r *http.Request, id, idemKey string) (*checkout, error) {
	var ch checkout
	h := http.Header{"Idempotency-Key": {idemKey}}
	return &ch, c.call(r, "POST", "/checkouts/"+url.PathEscape(id)+"/remainder", nil, h, &ch)
}
