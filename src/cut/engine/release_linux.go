//go:build linux

package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/google/nftables"
)

// A frame that passed the cut rule's lookup just before a delete committed
// re-adds the element in the rule's update (a dynset update adds what is
// missing), and a flood then keeps it alive for good. The window is one
// rule evaluation: Release looks again a few milliseconds after each
// delete, up to releaseChecks times.
const (
	releaseChecks = 5
	releaseSettle = 3 * time.Millisecond
)

// deletedElem is a set element Release deleted and watches.
type deletedElem struct {
	cutKey string // of e.cuts: a new cut of the connection stops the watch
	tuple  cut.Tuple
	set    *nftables.Set
	key    []byte
}

// Release clears the cuts match selects (verdict forward): their elements
// leave the sets, so the flows may be offloaded again. Elements that
// expired meanwhile are skipped. An element that frames in flight keep
// re-adding is deleted again; if it still comes back, the error names its
// tuple. It returns how many cuts it released.
func (e *Engine) Release(ctx context.Context, match func(cut.Cut) bool) (int, error) {
	sum := e.Summary()
	e.mu.Lock()
	n, deleted, err := e.deleteMatching(ctx, sum.Cuts, match)
	e.mu.Unlock()
	back, serr := e.settleDeleted(ctx, deleted)
	e.mu.Lock()
	e.checkIdle()
	e.mu.Unlock()
	switch {
	case err != nil:
		return n, err
	case serr != nil:
		return n, serr
	case len(back) > 0:
		names := make([]string, len(back))
		for i, d := range back {
			names[i] = d.tuple.String() + " (set " + d.set.Name + ")"
		}
		return n, fmt.Errorf("release: still cut: the element of %s came back after each of %d deletes (frames in flight re-add it); run the verdict again",
			strings.Join(names, "; "), releaseChecks+1)
	}
	return n, nil
}

// deleteMatching deletes the elements of the cuts match selects and forgets
// those cuts. The caller holds e.mu.
func (e *Engine) deleteMatching(ctx context.Context, cuts []cut.Cut, match func(cut.Cut) bool) (n int, deleted []deletedElem, err error) {
	var firstErr error
	for _, c := range cuts {
		if !match(c) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return n, deleted, err
		}
		released := false
		for _, t := range []cut.Tuple{c.Original, c.Reply} {
			if !c.InFastpath {
				continue
			}
			d, ok := e.elemOf(c.Original.String(), t)
			if !ok {
				continue
			}
			switch err := e.deleteElem(d); {
			case err == nil:
				released = true
				deleted = append(deleted, d)
			case !isGone(err) && firstErr == nil:
				firstErr = err
			}
		}
		delete(e.cuts, c.Original.String())
		if released || !c.InFastpath {
			n++
		}
	}
	if firstErr != nil {
		return n, deleted, fmt.Errorf("release: %w", firstErr)
	}
	return n, deleted, nil
}

func (e *Engine) elemOf(cutKey string, t cut.Tuple) (deletedElem, bool) {
	key, v6, err := cut.Key(t)
	if err != nil {
		return deletedElem{}, false
	}
	set := e.set4
	if v6 {
		set = e.set6
	}
	return deletedElem{cutKey: cutKey, tuple: t, set: set, key: key}, true
}

// deleteElem deletes one element in its own batch: deleting an element
// that has just expired fails the whole batch with ENOENT.
func (e *Engine) deleteElem(d deletedElem) error {
	if err := e.nft.SetDeleteElements(d.set, []nftables.SetElement{{Key: d.key}}); err != nil {
		return err
	}
	if err := e.nft.Flush(); err != nil {
		return err
	}
	if e.afterDelete != nil {
		e.afterDelete(d)
	}
	return nil
}

func isGone(err error) bool { return errors.Is(err, os.ErrNotExist) || isNoEnt(err) }

// settleDeleted looks for deleted elements that came back and deletes them
// again, releaseSettle apart, without holding e.mu while it waits. It
// returns those still present at the last look.
func (e *Engine) settleDeleted(ctx context.Context, pending []deletedElem) ([]deletedElem, error) {
	for i := 0; i < releaseChecks && len(pending) > 0; i++ {
		select {
		case <-ctx.Done():
			return pending, ctx.Err()
		case <-time.After(releaseSettle):
		}
		e.mu.Lock()
		var err error
		pending, err = e.deleteReturned(pending)
		e.mu.Unlock()
		if err != nil {
			return pending, err
		}
	}
	return pending, nil
}

// deleteReturned deletes again the pending elements the sets hold and
// returns them. The caller holds e.mu.
func (e *Engine) deleteReturned(pending []deletedElem) ([]deletedElem, error) {
	if !e.inFast {
		return nil, nil // the table went away
	}
	present := map[*nftables.Set]map[string]bool{}
	var back []deletedElem
	for _, d := range pending {
		if _, cutAgain := e.cuts[d.cutKey]; cutAgain {
			continue // its elements belong to the new cut now
		}
		if d.set != e.set4 && d.set != e.set6 {
			continue // the sets were re-created meanwhile
		}
		if present[d.set] == nil {
			els, err := e.nft.GetSetElements(d.set)
			if err != nil {
				return pending, fmt.Errorf("release: read set %s back: %w", d.set.Name, err)
			}
			present[d.set] = map[string]bool{}
			for _, el := range els {
				if t, err := cut.DecodeKey(el.Key); err == nil {
					present[d.set][t.String()] = true
				}
			}
		}
		if !present[d.set][d.tuple.String()] {
			continue
		}
		if err := e.deleteElem(d); err != nil && !isGone(err) {
			return pending, fmt.Errorf("release %s: delete again: %w", d.tuple, err)
		}
		e.log.WithField("tuple", d.tuple.String()).Debug("cut: released element came back: deleted again")
		back = append(back, d)
	}
	return back, nil
}
