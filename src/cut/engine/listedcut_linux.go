//go:build linux

package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/cut/blocklist"
	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// listedBatch is a run of flows the dump matched against the block lists,
// with why each is cut.
type listedBatch struct {
	flows  []netstate.Flow
	causes []cause
}

type cause struct{ reason, trigger string }

// listedBatchSize is how many matches the dump hands over at a time: small,
// so the first ones are in the sets while the kernel still walks its
// table; the inserts join batches that wait (up to insertChunk) when they
// fall behind.
const listedBatchSize = 64

// cutListed cuts every flow with an end in only (or, when only is nil, in
// any list). A goroutine reads the conntrack table and matches its
// entries while this one puts the matches in the sets as they come, so
// the first are dropped before the table is read to its end. The
// conntrack entries are deleted once every match is in the sets: a flow's
// elements are in before its entry goes, and no entry goes while the
// kernel walks the table.
//
// With flows, the pass also rebuilds its table of the addresses tracked.
func (e *Engine) cutListed(ctx context.Context, only *blocklist.Set, flows *blocklist.Tracked) error {
	batches := make(chan listedBatch, 64)
	var dump conntrack.TupleDump
	var dumpErr error
	var dumpTook time.Duration
	t0 := time.Now()
	go func() {
		defer close(batches)
		var b listedBatch
		if flows != nil {
			flows.Begin()
		}
		dump, dumpErr = e.ct.EachTuple(func(f netstate.Flow) bool {
			fa := blocklist.AddrsOf(f)
			if flows != nil {
				flows.Seen(f.ID, fa)
			}
			if f.Proto != "tcp" && f.Proto != "udp" {
				return true
			}
			hit, ok := e.lists.Load().Listed(fa, only)
			if !ok {
				return true
			}
			b.flows = append(b.flows, f)
			b.causes = append(b.causes, cause{hit.Reason(""), hit.Trigger})
			if len(b.flows) == listedBatchSize {
				batches <- b
				b = listedBatch{}
			}
			return true
		})
		dumpTook = time.Since(t0)
		if flows != nil {
			flows.End(dumpErr == nil)
		}
		if len(b.flows) > 0 {
			batches <- b
		}
	}()

	var cuts []cut.Cut
	var run insertRun
	var inserting time.Duration
	spared := 0
	e.mu.Lock()
	e.readOwnAddrs()
	e.mu.Unlock()
	for b := range batches {
		b = gatherWaiting(b, batches, insertChunk)
		e.mu.Lock()
		lo := len(cuts)
		b = e.stillListed(b, only)
		b = e.spareLocalListed(b, &spared)
		cuts = e.newCuts(cuts, b.flows, func(i int) (string, string) { return b.causes[i].reason, b.causes[i].trigger })
		if fresh := cuts[lo:]; len(fresh) > 0 {
			t := time.Now()
			if e.inFast {
				e.insertMore(&run, fresh)
			}
			e.record(fresh)
			inserting += time.Since(t)
			if e.afterInsert != nil {
				e.afterInsert(len(fresh))
			}
		}
		e.mu.Unlock()
	}
	e.log.Debugf("cut: conntrack dump of %d entries took %v (%d cuts in the sets after %v, %v of it inserting)", dump.Entries, dumpTook, len(cuts), time.Since(t0), inserting)
	if dump.Skipped > 0 {
		e.log.Warnf("cut: %d of %d conntrack entries could not be read and were not checked against the block lists (first: %v)", dump.Skipped, dump.Entries, dump.FirstSkip)
	}
	if dumpErr != nil {
		dumpErr = fmt.Errorf("cut: %w; the flows matched before it are cut", dumpErr)
	}
	if spared > 0 {
		e.mu.Lock()
		e.note(fmt.Sprintf("cut: %d connection(s) of the router itself have a listed far end and were not cut (a block list never cuts the router's own SSH, LuCI or DNS)", spared))
		e.mu.Unlock()
	}
	if len(cuts) == 0 {
		return dumpErr
	}
	if e.beforeFinish != nil {
		e.beforeFinish()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.inFast {
		e.insertDone(&run)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t1 := time.Now()
	err := e.finishCuts(cuts)
	e.log.Debugf("cut: %d flows: conntrack deletes %v", len(cuts), time.Since(t1))
	return errors.Join(dumpErr, err)
}

// stillListed keeps the batch's connections whose far end a list holds
// now: the dump matched them against the lists as they were, and a list
// that dropped the address since has had its release pass already (under
// e.mu, which the caller holds now), so a cut made here would stay.
func (e *Engine) stillListed(b listedBatch, only *blocklist.Set) listedBatch {
	lists := e.lists.Load()
	var out listedBatch
	for i, f := range b.flows {
		if _, ok := lists.Listed(blocklist.AddrsOf(f), only); ok {
			out.flows = append(out.flows, f)
			out.causes = append(out.causes, b.causes[i])
		}
	}
	return out
}

// spareLocalListed drops a batch's connections of the router itself and
// counts them. The caller holds e.mu.
func (e *Engine) spareLocalListed(b listedBatch, spared *int) listedBatch {
	if len(e.own) == 0 {
		return b
	}
	var out listedBatch
	for i, f := range b.flows {
		if isLocal(f, e.own) {
			*spared++
			continue
		}
		out.flows = append(out.flows, f)
		out.causes = append(out.causes, b.causes[i])
	}
	return out
}

// gatherWaiting appends the batches already waiting in the channel to b,
// up to about max flows: when the inserts fall behind the dump, fewer and
// larger netlink batches catch up faster.
func gatherWaiting(b listedBatch, batches <-chan listedBatch, max int) listedBatch {
	for len(b.flows) < max {
		select {
		case more, ok := <-batches:
			if !ok {
				return b
			}
			b.flows = append(b.flows, more.flows...)
			b.causes = append(b.causes, more.causes...)
		default:
			return b
		}
	}
	return b
}
