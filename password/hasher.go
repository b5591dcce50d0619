package password

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"runtime"
	"time"

	"golang.org/x/crypto/argon2"
	"golang.org/x/sync/semaphore"
	"golang.org/x/text/unicode/norm"

	"payd"
	"payd/clock"
)

// Defaults of Config.
const (
	// DefaultMemoryBudget caps the argon2id memory in use at once. A hash
	// holds its whole memory cost until it returns, so this, not the
	// number of requests, bounds what a flood of sign-ins can take.
	DefaultMemoryBudget = 256 << 20
	// DefaultMaxWait is how long a hash waits for room before answering
	// ErrBusy. With a hash of Current taking 25 to 50 ms, every answer,
	// verified or busy, comes within 1 s; a burst larger than the cores
	// clear in that time is told to retry (503 with Retry-After) rather
	// than left waiting while memory stays bounded.
	DefaultMaxWait = 750 * time.Millisecond
)

// ErrBusy is returned when a hash waited DefaultMaxWait (Config.MaxWait)
// for room and found none. It is temporarily_unavailable with a
// Retry-After, so the API answers 503 and the client retries.
var ErrBusy = &payd.Error{
	Code:       payd.ErrTemporarilyUnavailable,
	Message:    "too many password checks at once; try again in a moment",
	RetryAfter: time.Second,
}

// Config configures a Hasher. The zero value is the production setting.
type Config struct {
	// Params are the parameters of new hashes; zero means Current.
	Params Params
	// MemoryBudget is the most argon2id memory, in bytes, in use at once;
	// zero means DefaultMemoryBudget.
	MemoryBudget uint64
	// MaxConcurrent is the most hashes at once; zero means GOMAXPROCS,
	// because argon2id is CPU-bound and more hashes than cores only
	// share them, holding more memory and delaying every one.
	MaxConcurrent int
	// MaxWait bounds the wait for room; zero means DefaultMaxWait.
	MaxWait time.Duration
	// Clock times the wait; nil means clock.Real.
	Clock clock.Clock
}

// Hasher hashes and verifies passwords with argon2id, never running more
// at once than its memory budget and concurrency allow. It is safe for
// concurrent use.
type Hasher struct {
	params  Params
	sem     *semaphore.Weighted
	size    int64 // the semaphore's size in KiB
	maxWait time.Duration
	clock   clock.Clock
	// noneSalt and noneKey are what VerifyNone checks against.
	noneSalt, noneKey []byte
}

// NewHasher returns a Hasher configured by c. The semaphore is sized in
// KiB of argon2id memory: min(MemoryBudget, MaxConcurrent × Params.Memory),
// and never less than one hash at Params. It panics if Params would write
// hashes Decode refuses: that is a programming error, not a runtime one.
func NewHasher(c Config) *Hasher {
	h := &Hasher{params: c.Params, maxWait: c.MaxWait, clock: c.Clock}
	if h.params == (Params{}) {
		h.params = Current
	}
	p := h.params
	if _, _, _, err := Decode(Encode(p, make([]byte, p.SaltLen), make([]byte, p.KeyLen))); err != nil {
		panic(fmt.Sprintf("password.NewHasher: %+v: %v", p, err))
	}
	if h.maxWait == 0 {
		h.maxWait = DefaultMaxWait
	}
	if h.clock == nil {
		h.clock = clock.Real{}
	}
	budget, n := c.MemoryBudget, c.MaxConcurrent
	if budget == 0 {
		budget = DefaultMemoryBudget
	}
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	h.size = max(int64(h.params.Memory), min(int64(budget>>10), int64(n)*int64(h.params.Memory)))
	h.sem = semaphore.NewWeighted(h.size)
	h.noneSalt = make([]byte, h.params.SaltLen)
	h.noneKey = make([]byte, h.params.KeyLen)
	return h
}

// Params returns the parameters of new hashes.
func (h *Hasher) Params() Params { return h.params }

// MemoryBound returns the most argon2id memory, in bytes, the hashes in
// flight hold at once: the semaphore's size.
func (h *Hasher) MemoryBound() uint64 { return uint64(h.size) << 10 }

// Normalize returns the form of a password that is hashed: Unicode NFKC,
// as NIST SP 800-63B advises, so the same password typed on two keyboards
// (a precomposed é or e plus a combining accent, full-width letters)
// verifies. Check the strength of this form (payd.CheckPassword).
func Normalize(password string) string { return norm.NFKC.String(password) }

// Hash returns the PHC string of a new argon2id hash of password with a
// fresh random salt. It returns ErrBusy when no room frees up in time,
// and ctx's error when ctx ends first.
func (h *Hasher) Hash(ctx context.Context, password string) (string, error) {
	salt := make([]byte, h.params.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password: salt: %w", err)
	}
	key, err := h.key(ctx, password, salt, h.params)
	if err != nil {
		return "", err
	}
	return Encode(h.params, salt, key), nil
}

// Verify reports whether password matches the stored PHC string, comparing
// in constant time, and whether the caller should store a new Hash of it
// because the stored parameters differ from the current ones (rehash is
// only ever true with ok). err is ErrBusy, ctx's error, or a wrapped
// ErrMalformed for a stored string Decode refuses.
func (h *Hasher) Verify(ctx context.Context, password, encoded string) (ok, rehash bool, err error) {
	p, salt, want, err := Decode(encoded)
	if err != nil {
		return false, false, err
	}
	tooLong := len(password) > maxInput
	if tooLong {
		password = "" // spend the same, then fail: no new password is this long
	}
	got, err := h.key(ctx, password, salt, p)
	if err != nil {
		return false, false, err
	}
	ok = subtle.ConstantTimeCompare(got, want) == 1 && !tooLong
	return ok, ok && p != h.params, nil
}

// maxInput is the longest password, in bytes, Verify hashes. A new password
// is at most 128 runes after NFKC (payd.CheckPassword on Normalize), and
// composition shrinks a string by at most about 9 bytes a rune (a Hangul
// syllable typed as three jamo), so nothing stored came from a longer one;
// the cap keeps a sign-in from making payd normalise and hash up to the
// 1 MiB body limit.
const maxInput = 4096

// VerifyNone spends what Verify spends on a hash at the current parameters,
// the same memory, time and place in the queue, and then fails. Sign-in
// calls it for an unknown email or an account without a password, so those
// answer invalid_credentials exactly as a wrong password does, in the same
// time (spec 7.6). Its error is ErrBusy or ctx's.
func (h *Hasher) VerifyNone(ctx context.Context) error {
	got, err := h.key(ctx, "", h.noneSalt, h.params)
	if err != nil {
		return err
	}
	subtle.ConstantTimeCompare(got, h.noneKey)
	return nil
}

// key derives the argon2id key of password under p once the semaphore has
// room for p's memory.
func (h *Hasher) key(ctx context.Context, password string, salt []byte, p Params) ([]byte, error) {
	weight := min(int64(p.Memory), h.size)
	if err := h.acquire(ctx, weight); err != nil {
		return nil, err
	}
	defer h.sem.Release(weight)
	return argon2.IDKey([]byte(Normalize(password)), salt, p.Time, p.Memory, p.Threads, p.KeyLen), nil
}

// errWaited is the cause given to a wait that reached maxWait.
var errWaited = errors.New("password: waited too long for room")

// acquire takes weight KiB of the semaphore, waiting at most maxWait on the
// service clock, or less when ctx says so (payd.WithHashWait). The semaphore is first come, first served, so a waiting
// hash is never overtaken by later small ones.
func (h *Hasher) acquire(ctx context.Context, weight int64) error {
	if h.sem.TryAcquire(weight) {
		return nil
	}
	wait := h.maxWait
	if d, ok := payd.HashWait(ctx); ok && d < wait {
		wait = d
	}
	if wait <= 0 {
		return ErrBusy
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := h.clock.NewTimer(wait)
	defer timer.Stop()
	go func() {
		select {
		case <-timer.C():
			cancel(errWaited)
		case <-wctx.Done():
		}
	}()
	if err := h.sem.Acquire(wctx, weight); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return ErrBusy
	}
	return nil
}

// Normalize is the package's Normalize, so a Hasher is a
// payd.PasswordHasher.
func (h *Hasher) Normalize(password string) string { return Normalize(password) }
