package api

import (
	"context"
	"net/http"
	"time"

	"payd"
)

// cancelCheckout serves POST /checkouts/{id}/cancel: the customer walks
// away before sending anything (checkout_not_cancelable once they have).
func (s *Server) cancelCheckout(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	return s.changeCheckout(w, r, func(c *payd.Checkout, p *payd.Payment, now time.Time) error {
		_, err := c.Cancel(p, now)
		return err
	})
}

// claimRequest is the body of POST /checkouts/{id}/claim.
type claimRequest struct {
	TxHash *string `json:"tx_hash"`
}

// claimCheckout serves POST /checkouts/{id}/claim: the customer names the
// transaction that paid an expired or canceled checkout, and the payment
// goes to needs_review for the business (spec 7.4: invalid_tx_hash,
// checkout_not_claimable, already_claimed).
func (s *Server) claimCheckout(w http.ResponseWriter, r *http.Request) error {
	var req claimRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	hash := deref(req.TxHash)
	if hash == "" {
		return payd.FieldError("tx_hash", "tx_hash is required")
	}
	return s.changeCheckout(w, r, func(c *payd.Checkout, p *payd.Payment, now time.Time) error {
		if c.Rail != payd.RailCrypto {
			return payd.Errorf(payd.ErrWrongRail, "only a crypto checkout takes a transaction claim")
		}
		if n := s.opts.Networks[c.Crypto.Network]; n != nil {
			if err := n.ValidTxHash(hash); err != nil {
				return err
			}
		}
		return c.Claim(p, hash, now)
	})
}

// changeCheckout reads a checkout and its payment in a transaction,
// applies change and stores both with the stats the payment moves and
// their events (payd.SaveCheckoutChange, as the watcher and the card rail
// store theirs).
func (s *Server) changeCheckout(w http.ResponseWriter, r *http.Request, change func(*payd.Checkout, *payd.Payment, time.Time) error) error {
	id := r.PathValue("id")
	return s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
		c, err := q.CheckoutByID(ctx, id)
		if err != nil {
			return nil, err
		}
		p, err := q.PaymentByID(ctx, c.BusinessID, c.PaymentID)
		if err != nil {
			return nil, err
		}
		old, was, version := *p, c.Status, c.UpdatedAt
		if err := change(c, p, s.clock.Now()); err != nil {
			return nil, err
		}
		if c.UpdatedAt.Equal(version) && len(p.Events) == len(old.Events) {
			return s.toCheckout(c), nil // nothing changed (a repeated cancel)
		}
		return s.toCheckout(c), payd.SaveCheckoutChange(ctx, q, s, was, c, &old, p, actorOf(ctx, c.Email))
	})
}
