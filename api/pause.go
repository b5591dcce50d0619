package api

import (
	"context"
	"sync"
	"time"

	"payd"
	"payd/clock"
)

// pauseCache keeps the operator's pauses, read from the database at most
// once per interval so that every replica obeys a pause within it.
type pauseCache struct {
	store    payd.PauseStore
	clock    clock.Clock
	interval time.Duration

	mu     sync.Mutex
	paused map[string]bool
	until  time.Time
}

func newPauseCache(st payd.PauseStore, clk clock.Clock, interval time.Duration) *pauseCache {
	return &pauseCache{store: st, clock: clk, interval: interval}
}

// check returns temporarily_unavailable when name is paused.
func (p *pauseCache) check(ctx context.Context, name string) error {
	if name == "" {
		return nil
	}
	paused, err := p.current(ctx)
	if err != nil {
		return err
	}
	if paused[name] {
		return payd.PauseError(name)
	}
	return nil
}

// current returns the set of paused names, refreshing it when it is old.
func (p *pauseCache) current(ctx context.Context) (map[string]bool, error) {
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused != nil && now.Before(p.until) {
		return p.paused, nil
	}
	list, err := p.store.Pauses(ctx)
	if err != nil {
		return nil, err
	}
	p.paused = make(map[string]bool, len(list))
	for _, x := range list {
		p.paused[x.Name] = true
	}
	p.until = now.Add(p.interval)
	return p.paused, nil
}
