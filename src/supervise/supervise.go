// Package supervise runs an event source for the daemon's life: on any
// error (ENOBUFS means events were lost) it resyncs from a full read and
// resumes with backoff, and records since when the source is degraded.
//
// An event source is a pair of functions. watch follows the kernel's (or
// ubusd's) events until ctx ends and returns nil then; any return before
// that is a failure, whatever the error. resync re-reads the whole state
// the events describe, so whatever the lost events said is made up for; it
// runs before every restart of watch (not before the first run, which the
// caller has started from a full read of its own).
package supervise

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Backoff bounds the wait before a restart: it starts at Min after a
// failure, doubles with each failure in a row, and stops growing at Max.
// A watch that ran for at least Max before failing starts again at Min.
type Backoff struct {
	Min, Max time.Duration
}

// DefaultBackoff restarts fast after a single overrun and slowly when a
// source keeps failing (a socket the kernel refuses, a missing module).
var DefaultBackoff = Backoff{Min: 100 * time.Millisecond, Max: 30 * time.Second}

// Source is one supervised event source as `status` reports it.
type Source struct {
	Name string `json:"name"`
	// State is "running", "degraded" (failed, waiting or resyncing) or
	// "stopped" (the daemon's context ended).
	State string `json:"state"`
	// DegradedSince is when the current failure began; zero while running.
	DegradedSince time.Time `json:"degraded_since,omitempty"`
	Restarts      int       `json:"restarts"`             // restarts since the daemon began
	LastError     string    `json:"last_error,omitempty"` // the latest failure, kept after recovery
	LastErrorAt   time.Time `json:"last_error_at,omitempty"`
}

// Source states.
const (
	StateRunning  = "running"
	StateDegraded = "degraded"
	StateStopped  = "stopped"
)

// Group supervises sources and keeps their health. The zero value is not
// usable: use NewGroup, or the package's Default through Run and Health.
type Group struct {
	Backoff Backoff
	// Sleep waits d or until ctx ends (tests replace it to run without
	// time); it returns ctx's error when ctx ended first.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock of DegradedSince and of the backoff reset.
	Now func() time.Time
	// OnChange, when set, is called (outside the group's lock) after a
	// source's state changed, with the source's new record: the daemon
	// logs it.
	OnChange func(Source)

	mu      sync.Mutex
	sources map[string]*entry
}

// entry is a source's record and the run that owns it: when a source is
// restarted under the same name (new settings), the old run's last words
// must not overwrite the new run's state.
type entry struct {
	Source
	run uint64
}

// NewGroup makes a group on the real clock with DefaultBackoff.
func NewGroup() *Group {
	return &Group{Backoff: DefaultBackoff, Sleep: sleep, Now: time.Now, sources: map[string]*entry{}}
}

// Default is the daemon's group: every event source of the process.
var Default = NewGroup()

// Run supervises an event source in Default; see Group.Run.
func Run(ctx context.Context, name string, watch, resync func(ctx context.Context) error) {
	Default.Run(ctx, name, watch, resync)
}

// Go runs Run in its own goroutine.
func Go(ctx context.Context, name string, watch, resync func(ctx context.Context) error) {
	go Default.Run(ctx, name, watch, resync)
}

// Health is a snapshot of Default's sources, sorted by name.
func Health() []Source { return Default.Health() }

// ErrStopped is what a watch that returned nil before its context ended
// is recorded as.
var ErrStopped = errors.New("the event source stopped without an error")

// Run runs watch until ctx ends, restarting it after every failure: it
// marks the source degraded, waits the backoff, calls resync (nil: none)
// until it succeeds, and runs watch again. It returns when ctx ends. A
// source's name is its key: running two sources under one name in a group
// mixes their records, so give each its own.
func (g *Group) Run(ctx context.Context, name string, watch, resync func(ctx context.Context) error) {
	run := g.claim(name)
	update := func(f func(*Source)) { g.update(name, run, f) }
	defer update(func(s *Source) { s.State = StateStopped })
	wait := g.Backoff.Min
	for {
		started := g.Now()
		err := watch(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = ErrStopped
		}
		now := g.Now()
		if now.Sub(started) >= g.Backoff.Max {
			wait = g.Backoff.Min // it had been running well: a fresh failure
		}
		update(func(s *Source) {
			if s.State != StateDegraded {
				s.DegradedSince = now
			}
			s.State, s.LastError, s.LastErrorAt = StateDegraded, err.Error(), now
		})
		for {
			if g.Sleep(ctx, wait) != nil {
				return
			}
			wait = min(wait*2, g.Backoff.Max)
			if resync == nil {
				break
			}
			rerr := resync(ctx)
			if ctx.Err() != nil {
				return
			}
			if rerr == nil {
				break
			}
			at := g.Now()
			update(func(s *Source) {
				s.LastError, s.LastErrorAt = fmt.Sprintf("resync: %v", rerr), at
			})
		}
		update(func(s *Source) { s.State, s.DegradedSince, s.Restarts = StateRunning, time.Time{}, s.Restarts+1 })
	}
}

// Health is a snapshot of the group's sources, sorted by name.
func (g *Group) Health() []Source {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]Source, 0, len(g.sources))
	for _, e := range g.sources {
		out = append(out, e.Source)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Degraded is the subset of Health not running.
func (g *Group) Degraded() []Source {
	var out []Source
	for _, s := range g.Health() {
		if s.State == StateDegraded {
			out = append(out, s)
		}
	}
	return out
}

// claim makes name's record the new run's: running, keeping the counts
// of the runs before it.
func (g *Group) claim(name string) uint64 {
	g.mu.Lock()
	if g.sources == nil {
		g.sources = map[string]*entry{}
	}
	e := g.sources[name]
	if e == nil {
		e = &entry{Source: Source{Name: name}}
		g.sources[name] = e
	}
	e.run++
	e.State, e.DegradedSince = StateRunning, time.Time{}
	run, snap, cb := e.run, e.Source, g.OnChange
	g.mu.Unlock()
	if cb != nil {
		cb(snap)
	}
	return run
}

func (g *Group) update(name string, run uint64, f func(*Source)) {
	g.mu.Lock()
	e := g.sources[name]
	if e == nil || e.run != run {
		g.mu.Unlock()
		return // a newer run owns the name
	}
	f(&e.Source)
	snap, cb := e.Source, g.OnChange
	g.mu.Unlock()
	if cb != nil {
		cb(snap)
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
