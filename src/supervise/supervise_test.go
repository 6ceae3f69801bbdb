package supervise

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when the group sleeps or a test
// says so, and records every wait.
type fakeClock struct {
	now   time.Time
	waits []time.Duration
}

func testGroup(c *fakeClock) *Group {
	g := NewGroup()
	g.Backoff = Backoff{Min: 100 * time.Millisecond, Max: 1600 * time.Millisecond}
	g.Now = func() time.Time { return c.now }
	g.Sleep = func(ctx context.Context, d time.Duration) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.waits = append(c.waits, d)
		c.now = c.now.Add(d)
		return nil
	}
	return g
}

func TestRunResyncsAfterEveryFailureAndResumes(t *testing.T) {
	c := &fakeClock{now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	g := testGroup(c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var runs, resyncs int
	var seenDuringResync []Source
	lost := fmt.Errorf("receiving events: %w", syscall.ENOBUFS)
	watch := func(ctx context.Context) error {
		runs++
		switch runs {
		case 1, 2:
			c.now = c.now.Add(time.Millisecond) // ran briefly, then overran
			return lost
		case 3:
			return nil // a watch must not end before its context: a failure too
		}
		// Running again: the test looks at the health, then ends the daemon.
		if h := g.Health(); h[0].State != StateRunning || !h[0].DegradedSince.IsZero() {
			t.Errorf("after the resync the source is %+v, want running", h[0])
		}
		cancel()
		<-ctx.Done()
		return nil
	}
	resync := func(ctx context.Context) error {
		resyncs++
		seenDuringResync = append(seenDuringResync, g.Health()[0])
		return nil
	}
	g.Run(ctx, "nft monitor", watch, resync)

	if runs != 4 || resyncs != 3 {
		t.Fatalf("watch ran %d times and resync %d times, want 4 and 3 (one resync before each restart)", runs, resyncs)
	}
	first := seenDuringResync[0]
	if first.State != StateDegraded || !strings.Contains(first.LastError, "no buffer space") {
		t.Errorf("while resyncing after ENOBUFS: %+v, want degraded with the error", first)
	}
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if want := start.Add(time.Millisecond); !first.DegradedSince.Equal(want) {
		t.Errorf("degraded since %v, want %v (the moment watch failed)", first.DegradedSince, want)
	}
	if !strings.Contains(seenDuringResync[2].LastError, ErrStopped.Error()) {
		t.Errorf("a watch that returned nil early is recorded as %q", seenDuringResync[2].LastError)
	}
	if want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}; !slices.Equal(c.waits, want) {
		t.Errorf("waits %v, want %v (doubling backoff)", c.waits, want)
	}
	h := g.Health()
	if len(h) != 1 || h[0].Name != "nft monitor" || h[0].State != StateStopped || h[0].Restarts != 3 {
		t.Errorf("health after the end: %+v", h)
	}
}

func TestRunKeepsRetryingAFailingResync(t *testing.T) {
	c := &fakeClock{now: time.Unix(1000, 0)}
	g := testGroup(c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runs, resyncs := 0, 0
	var degradedSince []time.Time
	watch := func(ctx context.Context) error {
		runs++
		if runs == 1 {
			return errors.New("socket closed")
		}
		cancel()
		return nil
	}
	resync := func(context.Context) error {
		resyncs++
		degradedSince = append(degradedSince, g.Health()[0].DegradedSince)
		if resyncs < 7 {
			return errors.New("dump interrupted")
		}
		return nil
	}
	g.Run(ctx, "links", watch, resync)
	if runs != 2 || resyncs != 7 {
		t.Fatalf("runs %d resyncs %d, want 2 and 7", runs, resyncs)
	}
	for _, s := range degradedSince {
		if !s.Equal(time.Unix(1000, 0)) {
			t.Errorf("degraded-since moved during failed resyncs: %v", degradedSince)
			break
		}
	}
	want := []time.Duration{100, 200, 400, 800, 1600, 1600, 1600}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(c.waits, want) {
		t.Errorf("waits %v, want %v (capped at Max)", c.waits, want)
	}
}

func TestRunResetsBackoffAfterALongRun(t *testing.T) {
	c := &fakeClock{now: time.Unix(0, 0)}
	g := testGroup(c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runs := 0
	watch := func(ctx context.Context) error {
		runs++
		switch runs {
		case 1, 2, 3:
			return syscall.ENOBUFS
		case 4:
			c.now = c.now.Add(time.Hour) // a long healthy run, then one overrun
			return syscall.ENOBUFS
		}
		cancel()
		return nil
	}
	g.Run(ctx, "conntrack events", watch, nil)
	want := []time.Duration{100, 200, 400, 100}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(c.waits, want) {
		t.Errorf("waits %v, want %v", c.waits, want)
	}
}

func TestRunEndsWhenTheContextEndsDuringBackoff(t *testing.T) {
	g := NewGroup()
	g.Backoff = Backoff{Min: time.Hour, Max: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	resynced := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.Run(ctx, "inotify", func(context.Context) error { return errors.New("read failed") },
			func(context.Context) error { resynced = true; return nil })
	}()
	// Wait for the failure to be recorded, then end the daemon: Run must
	// return without waiting out the hour.
	for {
		if h := g.Degraded(); len(h) == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if resynced {
		t.Error("resynced after the context ended")
	}
	if h := g.Health(); h[0].State != StateStopped || h[0].LastError != "read failed" {
		t.Errorf("health %+v", h)
	}
}

func TestOnChangeSeesEveryTransition(t *testing.T) {
	c := &fakeClock{now: time.Unix(0, 0)}
	g := testGroup(c)
	var states []string
	g.OnChange = func(s Source) { states = append(states, s.State) }
	ctx, cancel := context.WithCancel(context.Background())
	runs := 0
	g.Run(ctx, "ubus", func(context.Context) error {
		runs++
		if runs == 1 {
			return errors.New("ubusd went away")
		}
		cancel()
		return nil
	}, nil)
	want := []string{StateRunning, StateDegraded, StateRunning, StateStopped}
	if !slices.Equal(states, want) {
		t.Errorf("transitions %v, want %v", states, want)
	}
}

func TestARestartedSourceIsNotMarkedStoppedByTheRunBeforeIt(t *testing.T) {
	g := NewGroup()
	oldCtx, stopOld := context.WithCancel(context.Background())
	oldDone := make(chan struct{})
	oldStarted := make(chan struct{})
	go func() {
		defer close(oldDone)
		g.Run(oldCtx, "block lists", func(ctx context.Context) error { close(oldStarted); <-ctx.Done(); return nil }, nil)
	}()
	<-oldStarted
	newCtx, stopNew := context.WithCancel(context.Background())
	defer stopNew()
	newStarted := make(chan struct{})
	go g.Run(newCtx, "block lists", func(ctx context.Context) error { close(newStarted); <-ctx.Done(); return nil }, nil)
	<-newStarted
	stopOld() // the old settings' watch ends after the new one began
	<-oldDone
	if h := g.Health(); len(h) != 1 || h[0].State != StateRunning {
		t.Errorf("health %+v, want the new run's running state", h)
	}
}
