//go:build linux

package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/google/nftables"
)

// Release clears the cuts match selects (verdict forward): each cut's
// tuples leave the cut sets and enter the released sets in one
// transaction, so no frame in flight can undo it (cut.ReleasedTimeout says
// why) and the flows may be offloaded again. Elements that expired
// meanwhile are skipped. It returns how many cuts it released.
func (e *Engine) Release(ctx context.Context, match func(cut.Cut) bool) (int, error) {
	sum := e.Summary()
	e.mu.Lock()
	defer e.mu.Unlock()
	n, err := e.releaseMatching(ctx, sum.Cuts, match)
	e.checkIdle()
	return n, err
}

// releaseMatching releases the cuts match selects and forgets them. The
// caller holds e.mu.
//
// A list that empties releases thousands of cuts at once: their tuples
// that still have an element (a reply tuple has often expired) move in
// batches of releaseBatch, one transaction each; a batch the kernel
// refuses (an element expired since it was read, the released sets full)
// goes again cut by cut.
func (e *Engine) releaseMatching(ctx context.Context, cuts []cut.Cut, match func(cut.Cut) bool) (n int, err error) {
	var firstErr error
	unguarded := 0
	var pending []cut.Cut
	inMap := map[string]bool{} // cuts the XDP map held: released there already
	for _, c := range cuts {
		if !match(c) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if e.xdpRelease(c) {
			inMap[c.Original.String()] = true
		}
		if !c.InFastpath || !e.inFast {
			delete(e.cuts, c.Original.String())
			n++
			continue
		}
		pending = append(pending, c)
	}
	// Reading the sets costs a dump of every cut; it pays only when many
	// cuts go at once. Without it (nil) every tuple is tried, and a batch
	// that fails goes tuple by tuple.
	var present elementSet
	if len(pending) > releaseBatch {
		present = e.presentElements(pending)
	}
	for len(pending) > 0 {
		// The cuts not yet released stay known, so that a later pass
		// (a restarted watch resyncs) releases them.
		if err := ctx.Err(); err != nil {
			return n, err
		}
		var batch []cut.Cut
		var tuples []cut.Tuple
		for len(pending) > 0 && len(tuples) < releaseBatch {
			c := pending[0]
			pending = pending[1:]
			batch = append(batch, c)
			seen, _ := present.split(c)
			tuples = append(tuples, seen...)
		}
		batched := len(tuples) == 0 || e.moveToReleased(tuples, true) == nil
		for _, c := range batch {
			seen, _ := present.split(c)
			released := batched && len(seen) > 0
			failed := false
			if !batched {
				released, failed = e.releaseEach(seen, &firstErr, &unguarded)
			}
			if failed {
				continue // still known: the next pass over the lists tries again
			}
			delete(e.cuts, c.Original.String())
			if released || inMap[c.Original.String()] {
				n++
			}
		}
	}
	if unguarded > 0 {
		e.note(fmt.Sprintf("cut: the released sets are full (cut_set_size %d): %d cut(s) were released by a plain delete, which a frame in flight can undo; raise fastpath.main.cut_set_size", e.cfg.SetSize, unguarded))
	}
	if firstErr != nil {
		return n, fmt.Errorf("release: %w", firstErr)
	}
	return n, nil
}

// releaseBatch is the most tuples one release transaction carries: two
// messages each, and the kernel acknowledges every message with a copy of
// it; 512 tuples' acknowledgements overran the socket's receive buffer
// (ENOBUFS), and under load 64 still did now and then.
const releaseBatch = 16

// elementSet is the tuples of the cut sets when read (presentElements);
// nil when they could not be read, and then every tuple counts as shown.
type elementSet map[string]bool

// releaseEach releases ts one by one; failed says one could not be.
func (e *Engine) releaseEach(ts []cut.Tuple, firstErr *error, unguarded *int) (released, failed bool) {
	for _, t := range ts {
		r, guarded, err := e.releaseOne(t)
		if err != nil {
			failed = true
			if *firstErr == nil {
				*firstErr = err
			}
		}
		released = released || r
		if !guarded {
			*unguarded++
		}
	}
	return released, failed
}

// releaseOne moves one tuple to the released set: one transaction, and
// an element that has expired is no error.
func (e *Engine) releaseOne(t cut.Tuple) (released, guarded bool, err error) {
	err = e.moveToReleased([]cut.Tuple{t}, true)
	switch {
	case err == nil:
		return true, true, nil
	case isGone(err):
		return false, true, nil
	case isSetFull(err):
		if err := e.moveToReleased([]cut.Tuple{t}, false); err != nil && !isGone(err) {
			return false, false, err
		}
		return true, false, nil
	}
	return false, true, err
}

// split parts c's tuples into those the dump showed and the others.
func (s elementSet) split(c cut.Cut) (seen, unseen []cut.Tuple) {
	ts := []cut.Tuple{c.Original}
	if !c.Reply.Equal(c.Original) {
		ts = append(ts, c.Reply)
	}
	for _, t := range ts {
		if s == nil || s[t.String()] {
			seen = append(seen, t)
		} else {
			unseen = append(unseen, t)
		}
	}
	return seen, unseen
}

// presentElements reads which tuples of cuts are in the cut sets now: a
// dump, and an exact lookup of each tuple the dump did not show (a dump
// of sets that frames and expiries change under it skips elements). The
// caller holds e.mu.
func (e *Engine) presentElements(cuts []cut.Cut) elementSet {
	s := elementSet{}
	for _, set := range []*nftables.Set{e.set4, e.set6} {
		els, err := e.nft.GetSetElements(set)
		if err != nil {
			return nil
		}
		for _, el := range els {
			if t, err := cut.DecodeKey(el.Key); err == nil {
				s[t.String()] = true
			}
		}
	}
	var unseen []cut.Tuple
	for _, c := range cuts {
		_, ts := s.split(c)
		unseen = append(unseen, ts...)
	}
	found, err := e.lookupTuples(unseen)
	if err != nil {
		return nil
	}
	for t := range found {
		s[t] = true
	}
	return s
}

// moveToReleased sends one transaction: the tuples' released marks (when
// guard) and the deletes of their cut elements.
func (e *Engine) moveToReleased(ts []cut.Tuple, guard bool) error {
	timeout := cut.ReleasedTimeout(e.cfg.Expiry)
	for _, t := range ts {
		key, v6, err := cut.Key(t)
		if err != nil {
			return err
		}
		set, rel := e.set4, e.rel4
		if v6 {
			set, rel = e.set6, e.rel6
		}
		if guard {
			if err := e.nft.SetAddElements(rel, []nftables.SetElement{{Key: key, Timeout: timeout}}); err != nil {
				return err
			}
		}
		if err := e.nft.SetDeleteElements(set, []nftables.SetElement{{Key: key}}); err != nil {
			return err
		}
	}
	if err := e.nft.Flush(); err != nil {
		return err
	}
	now := e.nowFn()
	if len(e.released) > 2*e.cfg.SetSize {
		e.pruneReleased(now)
	}
	for _, t := range ts {
		if guard {
			e.released[t.String()] = now.Add(timeout)
		}
		if e.afterRelease != nil {
			e.afterRelease(t)
		}
	}
	return nil
}

// isReleased reports whether t carries a released mark that has not
// expired: an element of t in a cut set is then one a frame in flight
// re-added, dropping nothing and about to expire. The caller holds e.mu.
func (e *Engine) isReleased(t string, now time.Time) bool {
	until, ok := e.released[t]
	return ok && now.Before(until)
}

// clearReleased deletes the released marks of tuples about to be cut
// again, before their elements go in: a mark would keep the new cut from
// dropping. Deleting a mark that just expired fails its batch (ENOENT),
// so then each goes alone. Expired marks are forgotten on the way. The
// caller holds e.mu.
func (e *Engine) clearReleased(cuts []cut.Cut) {
	if len(e.released) == 0 {
		return
	}
	now := e.nowFn()
	var marked []cut.Tuple
	for _, c := range cuts {
		for _, t := range []cut.Tuple{c.Original, c.Reply} {
			k := t.String()
			until, ok := e.released[k]
			if !ok {
				continue
			}
			delete(e.released, k)
			if now.Before(until) {
				marked = append(marked, t)
			}
		}
	}
	if len(e.released) > 2*e.cfg.SetSize {
		e.pruneReleased(now)
	}
	if len(marked) == 0 || e.deleteMarks(marked) == nil {
		return
	}
	for _, t := range marked {
		if err := e.deleteMarks([]cut.Tuple{t}); err != nil && !isGone(err) {
			e.note(fmt.Sprintf("cut %s: its released mark could not be cleared (%v): frames of it pass until the mark expires", t, err))
		}
	}
}

func (e *Engine) deleteMarks(ts []cut.Tuple) error {
	for _, t := range ts {
		key, v6, err := cut.Key(t)
		if err != nil {
			return err
		}
		rel := e.rel4
		if v6 {
			rel = e.rel6
		}
		if err := e.nft.SetDeleteElements(rel, []nftables.SetElement{{Key: key}}); err != nil {
			return err
		}
	}
	return e.nft.Flush()
}

// pruneReleased forgets expired marks. The caller holds e.mu.
func (e *Engine) pruneReleased(now time.Time) {
	for k, until := range e.released {
		if !now.Before(until) {
			delete(e.released, k)
		}
	}
}

func isGone(err error) bool { return errors.Is(err, os.ErrNotExist) || isNoEnt(err) }
