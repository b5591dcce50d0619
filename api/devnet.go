package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"payd"
)

// maxAdvance bounds one move of the test clock: ten years is more than any
// schedule payd keeps, and it keeps time arithmetic far from overflow.
const maxAdvance = 10 * 365 * 24 * 60 * 60

type advanceClockRequest struct {
	AdvanceSeconds int64 `json:"advance_seconds"`
}

type devnetClock struct {
	Kind string `json:"kind"`
	Now  Time   `json:"now"`
}

// advanceClock serves POST /devnet/clock (CONTRACT.md): everything that
// falls due on the service clock happens as if the time had passed.
func (s *Server) advanceClock(w http.ResponseWriter, r *http.Request) error {
	var req advanceClockRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.AdvanceSeconds < 1 || req.AdvanceSeconds > maxAdvance {
		return payd.FieldError("advance_seconds", "advance_seconds must be an integer from 1 to %d", maxAdvance)
	}
	now := s.opts.DevClock.Advance(time.Duration(req.AdvanceSeconds) * time.Second)
	s.refreshStaleRates(r.Context())
	writeJSON(w, http.StatusOK, single{devnetClock{Kind: "devnet_clock", Now: Time(now)}})
	return nil
}

// refresher is a RateProvider that can refresh at once (rate.Refresher).
type refresher interface {
	RunOnce(ctx context.Context) error
}

// refreshStaleRates refreshes the exchange rates when a clock jump left
// them older than their max age. Their refresh runs on the service clock
// too, so it falls due with the jump; running it before the answer means
// the next request quotes at once instead of meeting a 503
// upstream_unavailable until the refresher's goroutine gets to it.
func (s *Server) refreshStaleRates(ctx context.Context) {
	rf, ok := s.opts.Rates.(refresher)
	if !ok {
		return
	}
	if _, err := s.opts.Rates.Fresh(ctx); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
		return
	}
	if err := rf.RunOnce(ctx); err != nil {
		s.opts.Log.Warn("refreshing the exchange rates after a clock jump failed", slog.Any("error", err))
	}
}

// DevnetControl drives the simulated networks for the devnet routes of
// CONTRACT.md. chain/devnet's *Devnet implements it; api does not import
// the devnet, only this interface.
type DevnetControl interface {
	// Transfer sends a coin on a simulated network, into its mempool, and
	// returns the transaction hash. invalid_request names the field at
	// fault: network, asset, to, amount, from or reference.
	Transfer(ctx context.Context, req DevnetTransfer) (txHash string, err error)
	// Mine adds count blocks (1 to 1000) to network and returns its height.
	// invalid_request names network or count.
	Mine(ctx context.Context, network string, count int) (height int, err error)
	// Reorg orphans network's last depth blocks and returns its height.
	// invalid_request names network or depth.
	Reorg(ctx context.Context, network string, depth int) (height int, err error)
	// Transaction returns one transaction as a watcher sees it now.
	// not_found when network holds no transaction by that hash.
	Transaction(network, txHash string) (payd.Transfer, error)
}

// DevnetTransfer is a payment to make on a simulated network, each field
// as the person sent it. It is chain/devnet's TransferRequest: both name
// the same unnamed struct type, which is how *Devnet satisfies
// DevnetControl without api importing it; keep the fields in step.
type DevnetTransfer = struct {
	Network   string
	Asset     string
	To        string
	Amount    string
	From      string
	Reference string
}

// devnetTransferRequest is the body of POST /devnet/transfers.
type devnetTransferRequest struct {
	Network   string `json:"network"`
	Asset     string `json:"asset"`
	To        string `json:"to"`
	Amount    string `json:"amount"`
	From      string `json:"from"`
	Reference string `json:"reference"`
}

// devnetBlocksRequest is the body of POST /devnet/blocks; count defaults
// to one block.
type devnetBlocksRequest struct {
	Network string `json:"network"`
	Count   *int   `json:"count"`
}

// devnetReorgRequest is the body of POST /devnet/reorg.
type devnetReorgRequest struct {
	Network string `json:"network"`
	Depth   int    `json:"depth"`
}

// devnetTransaction is a simulated transaction on the wire: what the
// explorer URL of a devnet payment shows.
type devnetTransaction struct {
	Kind      string  `json:"kind"`
	Network   string  `json:"network"`
	TxHash    string  `json:"tx_hash"`
	Asset     string  `json:"asset"`
	Amount    string  `json:"amount"`
	From      string  `json:"from"`
	To        string  `json:"to"`
	Reference *string `json:"reference"`
	// Status is pending while in the mempool, mined once in a block.
	Status        string `json:"status"`
	Confirmations int    `json:"confirmations"`
}

// devnetChain is a simulated network's height after blocks or a reorg.
type devnetChain struct {
	Kind    string `json:"kind"`
	Network string `json:"network"`
	Height  int    `json:"height"`
}

// toDevnetTransaction converts a transfer on network for the wire.
func toDevnetTransaction(network string, t payd.Transfer) devnetTransaction {
	status := "mined"
	if t.Confirmations == 0 {
		status = "pending"
	}
	var ref *string
	if t.Reference != "" {
		ref = &t.Reference
	}
	return devnetTransaction{
		Kind: "devnet_transaction", Network: network, TxHash: t.TxHash, Asset: string(t.Amount.Asset),
		Amount: t.Amount.String(), From: t.From, To: t.To, Reference: ref, Status: status, Confirmations: t.Confirmations,
	}
}

// devnet returns the simulated networks, or temporarily_unavailable for a
// server started without them.
func (s *Server) devnet() (DevnetControl, error) {
	if s.opts.Devnet == nil {
		return nil, payd.Errorf(payd.ErrTemporarilyUnavailable, "this server runs without the devnet")
	}
	return s.opts.Devnet, nil
}

// createDevnetTransfer serves POST /devnet/transfers: a customer sends
// coins; the transaction waits in the mempool.
func (s *Server) createDevnetTransfer(w http.ResponseWriter, r *http.Request) error {
	var req devnetTransferRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	d, err := s.devnet()
	if err != nil {
		return err
	}
	hash, err := d.Transfer(r.Context(), DevnetTransfer(req))
	if err != nil {
		return err
	}
	t, err := d.Transaction(req.Network, hash)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, single{toDevnetTransaction(req.Network, t)})
	return nil
}

// createDevnetBlocks serves POST /devnet/blocks: mines blocks, the first
// confirming what is pending.
func (s *Server) createDevnetBlocks(w http.ResponseWriter, r *http.Request) error {
	req := devnetBlocksRequest{}
	if err := decode(r, &req); err != nil {
		return err
	}
	count := 1
	if req.Count != nil {
		count = *req.Count
	}
	return s.changeDevnet(w, r, http.StatusCreated, req.Network, func(ctx context.Context, d DevnetControl) (int, error) {
		return d.Mine(ctx, req.Network, count)
	})
}

// reorgDevnet serves POST /devnet/reorg: orphans the last blocks, whose
// transactions go back to the mempool.
func (s *Server) reorgDevnet(w http.ResponseWriter, r *http.Request) error {
	var req devnetReorgRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	return s.changeDevnet(w, r, http.StatusOK, req.Network, func(ctx context.Context, d DevnetControl) (int, error) {
		return d.Reorg(ctx, req.Network, req.Depth)
	})
}

// changeDevnet runs a change of network's blocks and answers its height.
func (s *Server) changeDevnet(w http.ResponseWriter, r *http.Request, status int, network string,
	change func(context.Context, DevnetControl) (int, error)) error {
	d, err := s.devnet()
	if err != nil {
		return err
	}
	height, err := change(r.Context(), d)
	if err != nil {
		return err
	}
	writeJSON(w, status, single{devnetChain{Kind: "devnet_chain", Network: network, Height: height}})
	return nil
}

// getDevnetTransaction serves GET /devnet/transactions/{network}/{hash},
// the page every devnet explorer URL opens.
func (s *Server) getDevnetTransaction(w http.ResponseWriter, r *http.Request) error {
	d, err := s.devnet()
	if err != nil {
		return err
	}
	network := r.PathValue("network")
	t, err := d.Transaction(network, r.PathValue("hash"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{toDevnetTransaction(network, t)})
	return nil
}
