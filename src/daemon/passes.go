package daemon

import (
	"context"
	"strings"
	"sync"

	"github.com/fastpath-wrt/fastpath/src/status"
)

// maxReasons bounds the triggers one coalesced pass names in its log line.
const maxReasons = 8

// pass is one reconcile pass that callers asked for and wait on.
type pass struct {
	why  []string
	done chan struct{} // closed when the pass has run; st is then set
	st   status.Status
}

// passQueue coalesces requests for a pass: every request made before the
// daemon's loop takes the pending pass joins it, so any number of reloads
// (LuCI, hotplug, init script, a flood of pipelined calls) cost at most
// the pass running now and one more.
type passQueue struct {
	mu      sync.Mutex
	pending *pass
	wake    chan struct{} // one buffered token: the loop has a pass to take
}

func newPassQueue() passQueue { return passQueue{wake: make(chan struct{}, 1)} }

// request joins the pending pass (making one when none is pending) and
// wakes the loop; it never blocks.
func (q *passQueue) request(why string) *pass {
	q.mu.Lock()
	if q.pending == nil {
		q.pending = &pass{done: make(chan struct{})}
	}
	p := q.pending
	if len(p.why) < maxReasons && !contains(p.why, why) {
		p.why = append(p.why, why)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return p
}

// take hands the pending pass to the loop; nil when none is pending.
func (q *passQueue) take() *pass {
	q.mu.Lock()
	defer q.mu.Unlock()
	p := q.pending
	q.pending = nil
	return p
}

func (p *pass) reason() string { return strings.Join(p.why, ", ") }

// wait waits for the pass or the caller's context.
func (p *pass) wait(ctx context.Context) (status.Status, error) {
	select {
	case <-p.done:
		return p.st, nil
	case <-ctx.Done():
		return status.Status{}, ctx.Err()
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
