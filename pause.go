package payd

import (
	"context"
	"strings"
	"time"
)

// Pause is something the operator has switched off for every replica:
// "checkouts", "card", "signups" or "network:NAME". While paused, the
// matching requests answer 503 temporarily_unavailable.
type Pause struct {
	Name     string
	Reason   string
	PausedAt time.Time
}

// Pausable things besides networks.
const (
	PauseCheckouts = "checkouts"
	PauseCard      = "card"
	PauseSignups   = "signups"
)

// ValidPauseName reports whether name is a pausable thing. Network names are
// checked by the caller against the networks it knows.
func ValidPauseName(name string, networks []string) bool {
	switch name {
	case PauseCheckouts, PauseCard, PauseSignups:
		return true
	}
	net, ok := strings.CutPrefix(name, "network:")
	if !ok {
		return false
	}
	for _, n := range networks {
		if n == net {
			return true
		}
	}
	return false
}

// PauseError is the error a paused thing gives its callers.
func PauseError(name string) *Error {
	what := name
	if net, ok := strings.CutPrefix(name, "network:"); ok {
		what = "payments on the " + net + " network"
	} else if name == PauseCard {
		what = "card payments"
	} else if name == PauseCheckouts {
		what = "new checkouts"
	}
	return Errorf(ErrTemporarilyUnavailable, "%s are paused by the operator; retry later", what)
}

// PauseStore keeps the operator's pauses in the database, so that every
// replica obeys them.
type PauseStore interface {
	// SetPause records a pause; pausing something already paused keeps the first time.
	SetPause(ctx context.Context, p Pause) error
	// DeletePause lifts a pause; lifting one that is not set is not an error.
	DeletePause(ctx context.Context, name string) error
	// Pauses lists what is paused now.
	Pauses(ctx context.Context) ([]Pause, error)
}
