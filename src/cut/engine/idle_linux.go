//go:build linux

package engine

import (
	"fmt"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/google/nftables"
)

// idleSlack is how long after the latest element's expiry the idle check
// looks: by then the kernel no longer reports it.
const idleSlack = time.Second

// liveElements reads both cut sets: how many elements that drop frames
// they hold (released ones a frame in flight re-added drop none) and the
// longest time one of them has left. The caller holds e.mu.
func (e *Engine) liveElements() (n int, longest time.Duration, err error) {
	now := e.nowFn()
	e.pruneReleased(now)
	for _, set := range []*nftables.Set{e.set4, e.set6} {
		els, err := e.nft.GetSetElements(set)
		if err != nil {
			return n, longest, fmt.Errorf("read set %s: %w", set.Name, err)
		}
		for _, el := range els {
			if len(e.released) > 0 {
				if t, err := cut.DecodeKey(el.Key); err == nil && e.isReleased(t.String(), now) {
					continue
				}
			}
			n++
			longest = max(longest, el.Expires)
		}
	}
	return n, longest, nil
}

// scheduleIdleCheck runs checkIdle after d. Elements expire in the kernel
// without a notification, so the check is timed to the longest expiry
// rather than polled. A newer schedule supersedes an older one.
// The caller holds e.mu.
func (e *Engine) scheduleIdleCheck(d time.Duration) {
	e.idleGen++
	gen := e.idleGen
	e.idleDue = time.Now().Add(d)
	time.AfterFunc(d, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if gen != e.idleGen {
			return
		}
		e.idleDue = time.Time{}
		e.checkIdle()
	})
}

// scheduleIdleCheckAfterInsert makes sure a check comes no later than one
// expiry after the elements just inserted. The caller holds e.mu.
func (e *Engine) scheduleIdleCheckAfterInsert() {
	d := e.cfg.Expiry + idleSlack
	if e.idleDue.IsZero() || e.idleDue.After(time.Now().Add(d)) {
		e.scheduleIdleCheck(d)
	}
}

// stopIdleCheck makes a scheduled check do nothing. The caller holds e.mu.
func (e *Engine) stopIdleCheck() {
	e.idleGen++
	e.idleDue = time.Time{}
}

// checkIdle detaches the chains once both sets are empty, or looks again
// when the longest-lived element would expire. Inserts hold e.mu too, so a
// cut cannot slip in between the read and the detach. The caller holds e.mu.
func (e *Engine) checkIdle() {
	if !e.inFast || len(e.hooked) == 0 {
		e.stopIdleCheck()
		return
	}
	n, longest, err := e.liveElements()
	switch {
	case err != nil:
		e.log.WithError(err).Warn("cut: idle check: the chains stay until the sets can be read")
		e.scheduleIdleCheck(e.cfg.Expiry + idleSlack)
	case n > 0:
		e.scheduleIdleCheck(longest + idleSlack)
	default:
		e.stopIdleCheck()
		e.removeChains()
		e.log.Debug("cut: no cut left: ingress chains detached")
	}
}

// syncAttachment brings the chains in line with the sets for Sync. With
// chains attached, the idle check owns their removal and only the devices
// are brought up to date; without, the sets are read, since elements that
// outlived a restart need their chains back. The caller holds e.mu.
func (e *Engine) syncAttachment() {
	if len(e.hooked) > 0 {
		e.syncChains()
		e.scheduleIdleCheckAfterInsert()
		return
	}
	n, longest, err := e.liveElements()
	if err != nil {
		e.warn("cut: " + err.Error() + ": the ingress chains are attached until the sets can be read")
		n, longest = 1, e.cfg.Expiry
	}
	if n == 0 {
		e.stopIdleCheck()
		e.removeChains()
		return
	}
	e.syncChains()
	e.scheduleIdleCheck(longest + idleSlack)
}
