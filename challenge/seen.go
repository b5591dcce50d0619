package challenge

import (
	"crypto/sha256"
	"sync"
	"time"
)

// seenWindow is how long an accepted provider token is remembered: longer
// than either provider keeps a token valid (Turnstile 300 s, hCaptcha
// about 120 s), so a replay within the provider's own window is refused
// here even if the provider said yes twice.
const seenWindow = 10 * time.Minute

// seenMax bounds the memory: 100 000 hashes of 32 bytes, a few MB. Past it
// the oldest are forgotten first, which leaves them to the provider's own
// single use; reaching it takes 166 accepted tokens a second for ten
// minutes, far past the per-IP limits.
const seenMax = 100_000

// seen remembers the hashes of the provider tokens accepted recently, in
// this process. The provider's single use already holds across replicas;
// this is the second lock for the cases where it does not: an idempotent
// retry (Turnstile answers a repeated idempotency_key with the same
// success), a provider bug, or a test secret left in production, which
// passes every token.
type seen struct {
	mu    sync.Mutex
	at    map[[32]byte]time.Time // hash → when it is forgotten
	queue [][32]byte             // in the order added, so oldest first
}

func newSeen() *seen { return &seen{at: make(map[[32]byte]time.Time)} }

func hashToken(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// has reports whether h was accepted and is still remembered at now.
func (s *seen) has(h [32]byte, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	until, ok := s.at[h]
	return ok && now.Before(until)
}

// add remembers h until now+seenWindow and reports whether it was new; of
// two racing adds of one token, one gets false.
func (s *seen) add(h [32]byte, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forget(now)
	if until, ok := s.at[h]; ok && now.Before(until) {
		return false
	}
	for len(s.queue) >= seenMax {
		s.drop()
	}
	s.at[h] = now.Add(seenWindow)
	s.queue = append(s.queue, h)
	return true
}

// forget drops the hashes whose window has passed, oldest first.
func (s *seen) forget(now time.Time) {
	for len(s.queue) > 0 {
		until, ok := s.at[s.queue[0]]
		if ok && now.Before(until) {
			return
		}
		s.drop()
	}
}

// drop forgets the oldest hash.
func (s *seen) drop() {
	delete(s.at, s.queue[0])
	s.queue[0] = [32]byte{}
	s.queue = s.queue[1:]
}

// size is how many hashes are remembered (for tests).
func (s *seen) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.at)
}
