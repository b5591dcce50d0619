package evm

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/websocket"

	"payd/chain"
)

// wsTransport speaks to a node over one websocket connection, dialed when
// first needed and dropped after any failure, so that the next exchange
// dials again rather than reading what a failed one left behind. Each
// request or batch goes as one text message; the node's answer is the
// first message with its ids, and messages before it (subscription
// notifications) are skipped. One exchange at a time holds the connection:
// the follower makes one call at a time anyway.
type wsTransport struct {
	url    string      // the URL without userinfo: never in an error
	header http.Header // Authorization, from the URL's userinfo
	dialer websocket.Dialer
	// turn is held by the exchange (or close) using conn; a channel
	// rather than a mutex, so that a caller waiting for its turn can give
	// up when its context ends.
	turn chan struct{}
	conn *websocket.Conn
}

// newWSTransport is a transport for the ws or wss URL u. Credentials in u's
// userinfo go as HTTP Basic authorization of the upgrade request, as
// net/http sends them for an http URL (gorilla/websocket refuses a URL with
// userinfo).
func newWSTransport(u *url.URL) *wsTransport {
	w := &wsTransport{header: http.Header{}, turn: make(chan struct{}, 1),
		dialer: websocket.Dialer{Proxy: http.ProxyFromEnvironment, HandshakeTimeout: requestTimeout}}
	if u.User != nil {
		pass, _ := u.User.Password()
		w.header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass)))
	}
	bare := *u
	bare.User = nil
	w.url = bare.String()
	return w
}

func (w *wsTransport) roundTrip(ctx context.Context, body []byte, answer func([]byte) bool) error {
	select {
	case w.turn <- struct{}{}:
	case <-ctx.Done():
		return errors.New(chain.TransportError(ctx.Err()))
	}
	defer func() { <-w.turn }()
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if w.conn == nil {
		conn, err := w.dial(ctx)
		if err != nil {
			return err
		}
		w.conn = conn
	}
	err := exchangeWS(ctx, w.conn, body, answer)
	if err != nil {
		w.conn.Close()
		w.conn = nil
	}
	return err
}

// dial opens the connection, its messages bounded by maxResponse.
func (w *wsTransport) dial(ctx context.Context) (*websocket.Conn, error) {
	conn, res, err := w.dialer.DialContext(ctx, w.url, w.header)
	if err != nil {
		if res != nil && errors.Is(err, websocket.ErrBadHandshake) {
			return nil, fmt.Errorf("connecting: HTTP %d", res.StatusCode)
		}
		return nil, fmt.Errorf("connecting: %s", chain.TransportError(err))
	}
	conn.SetReadLimit(maxResponse)
	return conn, nil
}

// past is a deadline long gone, which stops a read or write at once.
var past = time.Unix(1, 0)

// exchangeWS sends body on conn and reads until answer takes a message, by
// ctx's deadline. When ctx ends early, the deadlines move to the past,
// which stops a blocked read or write; conn is then not used again.
func exchangeWS(ctx context.Context, conn *websocket.Conn, body []byte, answer func([]byte) bool) error {
	deadline, _ := ctx.Deadline()
	conn.SetWriteDeadline(deadline)
	conn.SetReadDeadline(deadline)
	// The net.Conn's own deadline, not conn.SetWriteDeadline: that one
	// only sets a field the writing goroutine reads.
	stop := context.AfterFunc(ctx, func() { conn.UnderlyingConn().SetDeadline(past) })
	defer stop()
	if err := conn.WriteMessage(websocket.TextMessage, body); err != nil {
		return wsError(ctx, "sending", err)
	}
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return wsError(ctx, "reading the answer", err)
		}
		if answer(msg) {
			return nil
		}
	}
}

// wsError describes a failed send or read: an answer over maxResponse, the
// end of ctx, the node closing the connection.
func wsError(ctx context.Context, doing string, err error) error {
	var ce *websocket.CloseError
	switch {
	case errors.Is(err, websocket.ErrReadLimit):
		return errTooLarge
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %s", doing, chain.TransportError(ctx.Err()))
	case errors.As(err, &ce):
		return fmt.Errorf("%s: the node closed the connection (%d %s)", doing, ce.Code, chain.Clip(ce.Text))
	}
	return fmt.Errorf("%s: %s", doing, chain.TransportError(err))
}

func (w *wsTransport) close() error {
	w.turn <- struct{}{}
	defer func() { <-w.turn }()
	if w.conn == nil {
		return nil
	}
	err := w.conn.Close()
	w.conn = nil
	return err
}
