package daemon

import (
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"sync"
	"testing"
	"time"
)

// fakeTable is a conntrack table whose offloaded count takes cost on a
// clock of the test's own.
type fakeTable struct {
	mu        sync.Mutex
	clock     time.Time
	cost      time.Duration
	total     int
	offloaded int
	counts    int           // Counts calls
	counted   chan struct{} // one token per count
	gate      chan struct{} // when set, each count first takes a token from it
}

func (f *fakeTable) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clock
}

func (f *fakeTable) advance(d time.Duration) {
	f.mu.Lock()
	f.clock = f.clock.Add(d)
	f.mu.Unlock()
}

func (f *fakeTable) Total() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total, nil
}

func (f *fakeTable) Counts() (netstate.FlowCounts, error) {
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	f.clock = f.clock.Add(f.cost)
	f.counts++
	n := netstate.FlowCounts{Total: f.total, Offloaded: f.offloaded}
	f.mu.Unlock()
	f.counted <- struct{}{}
	return n, nil
}

func newFake(cost time.Duration) (*fakeTable, *offloadCounts) {
	f := &fakeTable{clock: time.Unix(1e9, 0), cost: cost, total: 100, offloaded: 80, counted: make(chan struct{}, 16)}
	c := newOffloadCounts(f)
	c.now = f.now
	return f, c
}

func get(t *testing.T, c *offloadCounts) netstate.FlowCounts {
	t.Helper()
	n, err := c.Counts()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCheapCountsAreFresh: a count that costs little is made for every
// call, and says it is fresh.
func TestCheapCountsAreFresh(t *testing.T) {
	f, c := newFake(time.Millisecond)
	for i := 0; i < 3; i++ {
		f.offloaded = 10 * i
		if n := get(t, c); n.Offloaded != 10*i || n.OffloadedAge != 0 {
			t.Fatalf("call %d: %+v, want %d offloaded, counted now", i, n, 10*i)
		}
		f.advance(5 * time.Second)
	}
	if f.counts != 3 {
		t.Fatalf("%d counts for 3 calls of a 1 ms count, want 3", f.counts)
	}
}

// TestCostlyCountsAreKept: a count of 250 ms is kept for 100 times that
// (25 s) with its age and a fresh total; then the call after gets it
// with its age and a new count runs in the background; a count older
// than a minute is never given.
func TestCostlyCountsAreKept(t *testing.T) {
	f, c := newFake(250 * time.Millisecond)
	if n := get(t, c); n.Offloaded != 80 || n.OffloadedAge != 0 {
		t.Fatalf("first call: %+v, want a count made now", n)
	}
	<-f.counted
	f.offloaded, f.total = 90, 85 // the table shrank below the last count
	f.advance(5 * time.Second)
	n := get(t, c)
	if f.counts != 1 {
		t.Fatalf("a call 5.25 s after a 250 ms count counted again")
	}
	if n.Total != 85 || n.Offloaded != 80 || n.OffloadedAge != 5.25 {
		t.Fatalf("kept count: %+v, want total 85 read now, 80 offloaded 5.25 s ago", n)
	}
	f.advance(20 * time.Second)
	if n := get(t, c); n.Offloaded != 80 || n.OffloadedAge != 25.25 {
		t.Fatalf("a call past 25 s: %+v, want the kept count with its age while a new one runs", n)
	}
	<-f.counted // the background count
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		c.mu.Lock()
		running := c.running
		c.mu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background count never finished")
		}
	}
	if n := get(t, c); n.Offloaded != 85 || n.OffloadedAge != 0.25 {
		t.Fatalf("after the background count: %+v, want its 90 offloaded capped at the total 85, 0.25 s old", n)
	}
	f.advance(2 * time.Minute)
	if n := get(t, c); n.OffloadedAge != 0 || f.counts != 3 {
		t.Fatalf("a call two minutes on: %+v after %d counts, want a count made now", n, f.counts)
	}
}

// TestSlowCountsNeverBlockPolls: where a count takes 1 s (a router), one
// is made every 100 s of polls every 5 s, always in the background: no
// poll waits for one, however old the kept count grows.
func TestSlowCountsNeverBlockPolls(t *testing.T) {
	f, c := newFake(time.Second)
	// A count waits for a token: a poll that waited for one would never
	// return, and one in the background cannot finish before the poll
	// that started it does.
	f.gate = make(chan struct{}, 1)
	f.gate <- struct{}{}
	get(t, c)
	<-f.counted
	for i := 1; i <= 40; i++ { // 200 s of polls
		f.advance(5 * time.Second)
		got := make(chan netstate.FlowCounts, 1)
		go func() {
			n, _ := c.Counts()
			got <- n
		}()
		var n netstate.FlowCounts
		select {
		case n = <-got:
		case <-time.After(30 * time.Second): // a hang, not a speed
			t.Fatalf("poll %d waited for a count", i)
		}
		if n.OffloadedAge > 105 {
			t.Fatalf("poll %d: the count is %.0f s old, want at most 100 s and a poll", i, n.OffloadedAge)
		}
		if c.busy() {
			f.gate <- struct{}{}
			<-f.counted
			for c.busy() {
				time.Sleep(time.Millisecond)
			}
		}
	}
	if f.counts != 3 {
		t.Fatalf("%d counts over 200 s of polls, want 3 (the first, then one every 100 s)", f.counts)
	}
}

// busy reports whether a count runs in the background.
func (c *offloadCounts) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running
}
