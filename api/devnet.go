package api

import (
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
	writeJSON(w, http.StatusOK, single{devnetClock{Kind: "devnet_clock", Now: Time(now)}})
	return nil
}
