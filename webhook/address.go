package webhook

import (
	"errors"
	"fmt"
	"net/netip"

	"payd"
)

// ErrForbiddenAddress is what every refused connection wraps, so the
// delivery loop and tests recognise an address refusal with errors.Is
// whatever layer (dialer, transport, client) reports it.
var ErrForbiddenAddress = errors.New("webhook: forbidden address")

// ForbiddenAddressError names the refused address and the rule that
// refused it, so a business reading its delivery log learns why its
// endpoint was never contacted.
type ForbiddenAddressError struct {
	// Addr is the IP address that was refused.
	Addr netip.Addr
	// Reason names the forbidden range, such as "loopback".
	Reason string
}

// Error describes the refusal for logs and delivery records.
func (e *ForbiddenAddressError) Error() string {
	return fmt.Sprintf("webhook: forbidden address %s (%s)", e.Addr, e.Reason)
}

// Is makes errors.Is(err, ErrForbiddenAddress) true for every refusal.
func (e *ForbiddenAddressError) Is(target error) bool { return target == ErrForbiddenAddress }

// CheckAddr returns nil when a delivery may connect to ip outside --dev,
// and a *ForbiddenAddressError otherwise. It reads the one table of
// forbidden addresses, payd.ForbiddenAddress, which also judges literal
// addresses when an endpoint is saved, so that what registration lets
// through is never refused at every delivery, nor the reverse.
func CheckAddr(ip netip.Addr) error {
	if reason := payd.ForbiddenAddress(ip); reason != "" {
		return &ForbiddenAddressError{ip, reason}
	}
	return nil
}
