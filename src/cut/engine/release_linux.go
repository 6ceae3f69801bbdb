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
	for _, c := range cuts {
		if !match(c) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if !c.InFastpath || !e.inFast {
			delete(e.cuts, c.Original.String())
			n++
			continue
		}
		pending = append(pending, c)
	}
	present := e.presentElements()
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
			tuples = append(tuples, present.of(c)...)
		}
		if len(tuples) == 0 || e.moveToReleased(tuples, true) == nil {
			for _, c := range batch {
				delete(e.cuts, c.Original.String())
				if len(present.of(c)) > 0 {
					n++
				}
			}
			continue
		}
		for _, c := range batch {
			ts := present.of(c)
			if len(ts) == 0 {
				delete(e.cuts, c.Original.String()) // expired on its own
				continue
			}
			released, guarded, err := e.releaseTuples(ts)
			if err != nil {
				// Still known: the next pass over the lists tries again.
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			delete(e.cuts, c.Original.String())
			if released {
				n++
			}
			if !guarded {
				unguarded++
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

// elementSet is the tuples the cut sets held when read; nil when they
// could not be read, and then every tuple counts as present.
type elementSet map[string]bool

func (s elementSet) of(c cut.Cut) []cut.Tuple {
	ts := []cut.Tuple{c.Original}
	if !c.Reply.Equal(c.Original) {
		ts = append(ts, c.Reply)
	}
	if s == nil {
		return ts
	}
	out := ts[:0]
	for _, t := range ts {
		if s[t.String()] {
			out = append(out, t)
		}
	}
	return out
}

// presentElements reads the tuples in the cut sets now. The caller holds e.mu.
func (e *Engine) presentElements() elementSet {
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
	return s
}

// releaseTuples moves the tuples of one cut from the cut sets to the
// released sets in one transaction. A tuple whose element has expired
// fails that transaction (ENOENT), so then each goes alone and the gone
// ones are skipped. With the released sets full the tuples are deleted
// without the guard (guarded false).
func (e *Engine) releaseTuples(ts []cut.Tuple) (released, guarded bool, err error) {
	err = e.moveToReleased(ts, true)
	switch {
	case err == nil:
		return true, true, nil
	case isSetFull(err):
		guarded = false
	case isGone(err):
		guarded = true
	default:
		return false, true, err
	}
	var firstErr error
	for _, t := range ts {
		err := e.moveToReleased([]cut.Tuple{t}, guarded)
		switch {
		case err == nil:
			released = true
		case isSetFull(err) && guarded:
			guarded = false
			if err := e.moveToReleased([]cut.Tuple{t}, false); err == nil {
				released = true
			} else if !isGone(err) && firstErr == nil {
				firstErr = err
			}
		case isGone(err):
		default:
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	return released, guarded, firstErr
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
