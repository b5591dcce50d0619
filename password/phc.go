package password

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id's cost parameters and output sizes; a PHC string
// records all of them, so a stored hash verifies after Current changes.
type Params struct {
	// Memory is the memory cost in KiB.
	Memory uint32
	// Time is the number of passes over the memory.
	Time uint32
	// Threads is the degree of parallelism (lanes).
	Threads uint8
	// SaltLen and KeyLen are the salt and hash lengths in bytes.
	SaltLen uint32
	KeyLen  uint32
}

// Current are the parameters new hashes use, measured on the 2-core
// machine payd is developed on (docs/passwords.md, BenchmarkArgon2):
// OWASP's argon2id configuration of 19 MiB, 2 passes and 1 lane, about
// 23 ms of one core. More would hold a dashboard sign-in up for little:
// with 2 cores, 100 sign-ins at once take 100 × 23 ms / 2 ≈ 1.2 s to clear
// (see TestConcurrentVerify), and the per-email locks of spec 8.3 stop
// online guessing long before the hash cost matters.
var Current = Params{Memory: 19 << 10, Time: 2, Threads: 1, SaltLen: 16, KeyLen: 32}

// Bounds a decoded hash must respect, so a corrupt or planted row cannot
// make payd allocate gigabytes or spin for minutes.
const (
	MaxMemory  = 256 << 10 // KiB
	MaxTime    = 16
	MaxThreads = 16
	minSalt    = 8
	maxSalt    = 64
	minKey     = 16
	maxKey     = 64
)

// ErrMalformed is returned (wrapped) for a stored hash Decode refuses.
var ErrMalformed = errors.New("password: malformed argon2id hash")

// b64 is PHC's base64: the standard alphabet without padding, and strict
// about the unused bits so each value has one spelling.
var b64 = base64.RawStdEncoding.Strict()

// Encode returns the PHC string of an argon2id hash:
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>.
func Encode(p Params, salt, key []byte) string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.Memory, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// Decode parses a PHC string written by Encode. It is strict: one version
// (19), the parameters m, t, p in that order and nothing else, decimal
// numbers without signs or leading zeros, canonical base64, and every
// value within the bounds above. Anything else is ErrMalformed.
func Decode(s string) (p Params, salt, key []byte, err error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v=19" {
		return Params{}, nil, nil, fmt.Errorf("%w: not an argon2id version 19 PHC string", ErrMalformed)
	}
	if p, err = decodeParams(parts[3]); err != nil {
		return Params{}, nil, nil, err
	}
	salt, err1 := b64.DecodeString(parts[4])
	key, err2 := b64.DecodeString(parts[5])
	switch {
	case err1 != nil || err2 != nil || b64.EncodeToString(salt) != parts[4] || b64.EncodeToString(key) != parts[5]:
		// The comparison catches what the decoder skips: \r and \n.
		return Params{}, nil, nil, fmt.Errorf("%w: bad base64", ErrMalformed)
	case len(salt) < minSalt || len(salt) > maxSalt:
		return Params{}, nil, nil, fmt.Errorf("%w: salt of %d bytes", ErrMalformed, len(salt))
	case len(key) < minKey || len(key) > maxKey:
		return Params{}, nil, nil, fmt.Errorf("%w: hash of %d bytes", ErrMalformed, len(key))
	}
	p.SaltLen, p.KeyLen = uint32(len(salt)), uint32(len(key))
	return p, salt, key, nil
}

// decodeParams parses "m=M,t=T,p=P" and checks the bounds.
func decodeParams(s string) (Params, error) {
	fields := strings.Split(s, ",")
	if len(fields) != 3 {
		return Params{}, fmt.Errorf("%w: want m, t and p", ErrMalformed)
	}
	var v [3]uint64
	for i, name := range []string{"m", "t", "p"} {
		num, ok := strings.CutPrefix(fields[i], name+"=")
		n, err := strconv.ParseUint(num, 10, 32)
		if !ok || err != nil || num[0] == '0' {
			return Params{}, fmt.Errorf("%w: bad %s", ErrMalformed, name)
		}
		v[i] = n
	}
	m, t, threads := v[0], v[1], v[2]
	switch {
	case threads < 1 || threads > MaxThreads:
		return Params{}, fmt.Errorf("%w: p=%d out of range", ErrMalformed, threads)
	case m < 8*threads || m > MaxMemory:
		return Params{}, fmt.Errorf("%w: m=%d out of range", ErrMalformed, m)
	case t < 1 || t > MaxTime:
		return Params{}, fmt.Errorf("%w: t=%d out of range", ErrMalformed, t)
	}
	return Params{Memory: uint32(m), Time: uint32(t), Threads: uint8(threads)}, nil
}
