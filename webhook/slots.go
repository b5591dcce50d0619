package webhook

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"payd"
)

// slowAfter is how long an attempt may take before its endpoint counts as
// slow, and slowShare a slow endpoint's share of attempts in flight.
// quickUnder is how soon an attempt must end for its endpoint to count as
// quick, with quickFactor times the usual share: on a loaded machine even
// a local receiver's attempts take tens of milliseconds, and 64 in flight
// then capped one endpoint below 2,000 deliveries/s. An endpoint starts
// with the usual share until an attempt shows its pace, so endpoints that
// never answer hold 64 each for their first 15 s, not 256.
const (
	slowAfter   = 5 * time.Second
	slowShare   = 4
	quickUnder  = time.Second
	quickFactor = 4
)

// pace is what the last attempt to an endpoint showed of its speed; an
// endpoint with neither is not known yet, or took between quickUnder and
// slowAfter.
type pace int8

const (
	paceQuick pace = iota + 1
	paceSlow
)

// slots count the deliveries the loop holds, in all (attempts in flight
// and results not saved yet) and per endpoint (attempts in flight), so
// that a claim takes only what there is room for and passes over the
// endpoints that already have their share. An endpoint's share is
// quickFactor × perEndpoint while its attempts end within quickUnder,
// slowShare once one took slowAfter or longer, and perEndpoint otherwise
// (at first, and between the two): a dead endpoint then holds a few
// connections, a busy fast one many.
type slots struct {
	max, perEndpoint int
	// freed wakes the loop when an attempt ends.
	freed chan struct{}
	// more is set when a claim may find rows that the last one could not
	// take: a slot came free for an endpoint at its share, or for the
	// whole loop, or a fan-out left rows for want of any slot.
	more atomic.Bool

	mu       sync.Mutex
	inFlight int
	endpoint map[string]int
	pace     map[string]pace
}

func newSlots(max, perEndpoint int) slots {
	return slots{max: max, perEndpoint: perEndpoint, freed: make(chan struct{}, 1), endpoint: map[string]int{},
		pace: map[string]pace{}}
}

// share is the endpoint's share of attempts in flight; s.mu is held.
func (s *slots) share(id string) int {
	switch s.pace[id] {
	case paceSlow:
		return slowShare
	case paceQuick:
		return quickFactor * s.perEndpoint
	}
	return s.perEndpoint
}

// room returns how many deliveries the next claim may take (at most
// perEndpoint, so that one claim cannot hand a fast endpoint more than
// its share twice over) and the endpoints it must pass over.
func (s *slots) room() (n int, busy []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n = min(s.max-s.inFlight, s.perEndpoint)
	if n <= 0 {
		return 0, nil
	}
	for id, k := range s.endpoint {
		if k >= s.share(id) {
			busy = append(busy, id)
		}
	}
	return n, busy
}

// takeClaimed counts a claimed delivery's attempt to the endpoint id and
// reports true, or false for a slow endpoint already at its share: that
// row is handed back unattempted (Deliverer.start), so a claim that went
// past a slow endpoint's share hangs no more connections on it. A fast
// endpoint may go past its share by what one claim took (a soft bound).
func (s *slots) takeClaimed(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pace[id] == paceSlow && s.endpoint[id] >= slowShare {
		return false
	}
	s.inFlight++
	s.endpoint[id]++
	return true
}

// tryTake counts an attempt to the endpoint id if there is room for it,
// in all and for the endpoint; it reports whether it did, and whether
// every slot was taken.
func (s *slots) tryTake(id string) (ok, full bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight >= s.max {
		return false, true
	}
	if s.endpoint[id] >= s.share(id) {
		return false, false
	}
	s.inFlight++
	s.endpoint[id]++
	return true, false
}

// filled reports whether ds all went to one endpoint that now has its
// full share.
func (s *slots) filled(ds []*payd.WebhookDelivery) bool {
	for _, dl := range ds[1:] {
		if dl.WebhookID != ds[0].WebhookID {
			return false
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(ds) > 0 && s.endpoint[ds[0].WebhookID] >= s.share(ds[0].WebhookID)
}

// untake counts a slot taken for nothing off.
func (s *slots) untake(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
	if s.endpoint[id]--; s.endpoint[id] <= 0 {
		delete(s.endpoint, id)
	}
}

// done counts an attempt to id that took took (negative when nothing was
// sent) off its endpoint, notes the endpoint's pace, and wakes the loop. When this frees the
// endpoint's share (it had exactly its share), claims may have passed rows
// over that now have room, so it is worth a claim. The delivery still
// holds its place in all until its result is saved (release), so that
// attempts cannot outrun saving.
func (s *slots) done(id string, took time.Duration) {
	s.mu.Lock()
	if s.endpoint[id] == s.share(id) {
		s.more.Store(true)
	}
	if s.endpoint[id]--; s.endpoint[id] <= 0 {
		delete(s.endpoint, id)
	}
	switch {
	case took >= slowAfter:
		s.pace[id] = paceSlow
	case took >= quickUnder:
		delete(s.pace, id)
	case took >= 0:
		s.pace[id] = paceQuick
	}
	s.mu.Unlock()
	s.wake()
}

// release gives back the places of n deliveries whose results are saved
// (or dropped) and wakes the loop.
func (s *slots) release(n int) {
	s.mu.Lock()
	if s.inFlight >= s.max {
		s.more.Store(true)
	}
	s.inFlight -= n
	s.mu.Unlock()
	s.wake()
}

func (s *slots) wake() {
	select {
	case s.freed <- struct{}{}:
	default:
	}
}

// saveBatch caps how many results one transaction saves, and savers how
// many such transactions run at once (PostgreSQL runs them side by side;
// SQLite's writer commits them together).
const (
	saveBatch = 256
	savers    = 4
)

// LaneConns is how many database connections the loop uses at most at
// once, the size of the pool of its own it gets on PostgreSQL (store.Lane,
// docs/webhook-delivery.md): one for fanning out, one for claiming and
// one per saving transaction.
const LaneConns = 2 + savers

// saver saves the results of attempts in batches, one statement per 100
// rows: on PostgreSQL one commit instead of one per delivery, on SQLite
// one job of the writer. Each row is still fenced by its own version, so a
// result whose lease was taken over is discarded alone.
type saver struct {
	d    *Deliverer
	wake chan struct{}
	sem  chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	pending []*payd.WebhookDelivery
}

func newSaver(d *Deliverer) saver {
	return saver{d: d, wake: make(chan struct{}, 1), sem: make(chan struct{}, savers)}
}

// add queues dl to be saved and wakes the saving goroutine.
func (s *saver) add(dl *payd.WebhookDelivery) {
	s.mu.Lock()
	s.pending = append(s.pending, dl)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// loop saves whatever is queued until stop is closed, then saves the rest
// and waits for it. Saving does not follow the loop's ctx: an attempt
// that ended is recorded even while the loop shuts down.
func (s *saver) loop(ctx context.Context, stop <-chan struct{}) {
	ctx = context.WithoutCancel(ctx)
	for {
		select {
		case <-s.wake:
			s.flush(ctx)
		case <-stop:
			s.flush(ctx)
			s.wg.Wait()
			return
		}
	}
}

// flush starts saving everything queued, a batch per transaction, with
// at most savers transactions at once; while they are all busy, results
// gather into bigger batches.
func (s *saver) flush(ctx context.Context) {
	for {
		s.mu.Lock()
		batch := s.pending[:min(len(s.pending), saveBatch)]
		s.pending = s.pending[len(batch):]
		if len(s.pending) == 0 {
			s.pending = nil
		}
		s.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		s.sem <- struct{}{}
		s.wg.Add(1)
		go func() {
			defer func() { <-s.sem; s.wg.Done() }()
			s.save(ctx, batch)
			s.d.slots.release(len(batch))
		}()
	}
}

// save writes batch in one statement per 100 rows (SaveDeliveries). A
// row whose lease was lost or whose endpoint was deleted is skipped and
// logged; any other failure drops the whole batch, whose leases then lapse
// and whose deliveries are attempted again.
func (s *saver) save(ctx context.Context, batch []*payd.WebhookDelivery) {
	lost, err := s.d.store.SaveDeliveries(ctx, batch)
	if err != nil {
		s.d.log.Warn("webhook delivery: saving attempts", slog.Int("deliveries", len(batch)), slog.Any("error", err))
		return
	}
	for _, id := range lost {
		s.d.log.Warn("webhook delivery: an attempt's lease was taken over or its delivery deleted meanwhile; not saved",
			slog.String("delivery", id))
	}
}
