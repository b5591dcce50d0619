package evm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"payd/chain"
)

// transport carries JSON-RPC messages to one node and back: HTTP POST
// (httpTransport) or a websocket (wsTransport). Its errors say what failed
// without the node's URL, which may hold credentials; the client adds the
// endpoint.
type transport interface {
	// roundTrip sends body, one request or a batch, and hands each message
	// the node sends back to answer until answer reports it was the answer.
	roundTrip(ctx context.Context, body []byte, answer func(msg []byte) bool) error
	// close lets go of what the transport holds open.
	close() error
}

// httpTransport POSTs each request or batch: its response body is the
// answer.
type httpTransport struct {
	url  string // the full URL, credentials included: never in an error
	http *http.Client
}

func (h *httpTransport) roundTrip(ctx context.Context, body []byte, answer func([]byte) bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return errors.New("cannot make the request")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	res, err := h.http.Do(req)
	if err != nil {
		return errors.New(chain.TransportError(err))
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxResponse+1))
	if err != nil {
		return fmt.Errorf("reading the answer: %s", chain.TransportError(err))
	}
	if len(data) > maxResponse {
		return errTooLarge
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", res.StatusCode)
	}
	answer(data) // an HTTP node answers in its response, whatever the ids say
	return nil
}

func (h *httpTransport) close() error {
	h.http.CloseIdleConnections()
	return nil
}

// errTooLarge is an answer over maxResponse.
var errTooLarge = fmt.Errorf("the answer is over %d MiB", maxResponse>>20)
