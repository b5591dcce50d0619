package hd

import (
	"errors"
	"fmt"

	"payd/money"
)

// Reason says why an input was refused. The values are stable strings, so a
// caller may switch on them or log them.
type Reason string

// The reasons an account key, address, transaction hash, index or recovery
// phrase is refused.
const (
	// Malformed: characters outside the format's alphabet, a missing
	// prefix, mixed case where case matters, or an empty input.
	Malformed Reason = "malformed"
	// BadLength: the input or its decoded payload has the wrong size.
	BadLength Reason = "length"
	// BadChecksum: the built-in checksum (base58check, bech32, EIP-55,
	// BIP39) does not match, which almost always means a typo.
	BadChecksum Reason = "checksum"
	// PrivateKey: the input holds private key material. payd never takes it.
	PrivateKey Reason = "private_key"
	// BadDepth: an extended key that is not an account key (depth 3, with a
	// hardened index).
	BadDepth Reason = "depth"
	// WrongKind: a well-formed value of another kind, such as a BIP49 ypub
	// where a BIP84 zpub belongs, or a bitcoin address given for tron.
	WrongKind Reason = "kind"
	// WrongNet: a test-network value where a main-network one belongs, or
	// the reverse.
	WrongNet Reason = "net"
	// NotOnCurve: the bytes do not encode a point of the key's curve, so no
	// private key exists for them (for Solana: a program-derived or token
	// account address rather than a wallet key).
	NotOnCurve Reason = "curve"
	// Unsupported: a network payd does not serve, or an address form payd
	// deliberately does not send to.
	Unsupported Reason = "unsupported"
	// Hardened: a derivation index at or above 2^31.
	Hardened Reason = "hardened"
)

// What was refused, as Error.Input names it.
const (
	InputAccountKey     = "account key"
	InputAddress        = "address"
	InputTxHash         = "transaction hash"
	InputIndex          = "index"
	InputRecoveryPhrase = "recovery phrase"
	InputWordCount      = "word count"
)

// Error reports an input this package refuses and why. Its message is meant
// for the person who supplied the input (an API invalid_request names the
// field and carries Error() as the message) and never repeats the input
// itself, which may be secret.
type Error struct {
	// Network is the network the input was checked for, or "" when the
	// input belongs to none (a recovery phrase).
	Network money.Network
	// Input names what was refused: one of the Input… constants.
	Input string
	// Reason is the stable class of the refusal.
	Reason Reason
	// Detail is one clause for people, safe to show and to log.
	Detail string
}

// Error implements the error interface: "bitcoin account key: is an extended
// private key (zprv); …".
func (e *Error) Error() string {
	if e.Network != "" {
		return fmt.Sprintf("%s %s: %s", e.Network, e.Input, e.Detail)
	}
	return e.Input + ": " + e.Detail
}

// ReasonOf returns the Reason of err if it is, or wraps, an *Error, and ""
// otherwise (for example when a reader of random bytes failed).
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// refuse builds an *Error; the detail is formatted like fmt.Sprintf.
func refuse(n money.Network, input string, r Reason, format string, args ...any) *Error {
	return &Error{Network: n, Input: input, Reason: r, Detail: fmt.Sprintf(format, args...)}
}
