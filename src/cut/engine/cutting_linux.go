//go:build linux

package engine

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/logger"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/google/nftables"
)

// CutAddress cuts every TCP and UDP connection with an end in p, in the
// original or the reply direction (so a NATed far end is found too). A
// prefix shorter than cut_min_prefix4/6 is refused unless opt.Force, and
// connections of the router itself are left alone unless opt.Local: both
// answer a *cut.RefusedError that says why.
func (e *Engine) CutAddress(ctx context.Context, p netip.Prefix, reason, trigger string, opt cut.CutOptions) ([]cut.Cut, error) {
	e.mu.Lock()
	cfg := e.cfg
	e.mu.Unlock()
	if err := cfg.CheckWidth(p); err != nil && !opt.Force {
		return nil, err
	}
	flows, err := e.ct.FlowsWithAddress(p.Masked())
	if err != nil {
		return nil, fmt.Errorf("cut %s: %w", p, err)
	}
	return e.cutFlows(ctx, flows, reason, trigger, opt.Local, "address")
}

// CutTuple cuts the connection with tuple t in either direction. Without a
// conntrack entry for it, t and its reverse are still put in the sets, so
// frames of that 5-tuple are dropped from now on.
func (e *Engine) CutTuple(ctx context.Context, t cut.Tuple, reason, trigger string, opt cut.CutOptions) ([]cut.Cut, error) {
	if _, _, _, err := cut.ParseTuple(t); err != nil {
		return nil, fmt.Errorf("cut tuple: %w", err)
	}
	flows, err := e.ct.Flows(conntrack.Filter{Proto: t.Proto})
	if err != nil {
		return nil, fmt.Errorf("cut %s: %w", t, err)
	}
	var match []netstate.Flow
	for _, f := range flows {
		if f.Original.Equal(t) || f.Reply.Equal(t) {
			match = append(match, f)
		}
	}
	if len(match) == 0 {
		match = []netstate.Flow{{Proto: t.Proto, Original: t, Reply: t.Reverse()}}
	}
	return e.cutFlows(ctx, match, reason, trigger, opt.Local, "dst")
}

// cutFlows puts the original and reply tuple of every TCP and UDP flow in
// the sets (one batch), then deletes the conntrack entries, which takes
// the flows out of the flowtable (and a hardware PPE). Connections of the
// router itself are spared unless local: when that spares all of them, the
// answer is a *cut.RefusedError on field.
func (e *Engine) cutFlows(ctx context.Context, flows []netstate.Flow, reason, trigger string, local bool, field string) ([]cut.Cut, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if strings.HasPrefix(trigger, "blocklist:") {
		// Looked up with no lock held: a list that dropped the address
		// since has had its release pass, so a cut made now would stay.
		flows = e.stillListed(listedBatch{flows: flows, causes: make([]cause, len(flows))}, nil).flows
	}
	if !local && trigger != "" && !strings.HasPrefix(trigger, "blocklist:") {
		e.readOwnAddrs() // a call: the addresses as they are now; lists use those of the last pass
	}
	flows, spared := e.spareLocal(flows, local)
	cuts := e.newCuts(nil, flows, func(int) (string, string) { return reason, trigger })
	if spared > 0 {
		e.note(fmt.Sprintf("cut (%s): %d connection(s) of the router itself were not cut (its SSH, LuCI, DNS); a call that passes local cuts them", trigger, spared))
	}
	if len(cuts) == 0 {
		if spared > 0 {
			return nil, localRefused(spared, field)
		}
		return nil, nil
	}
	t0 := time.Now()
	if e.inFast {
		e.insert(cuts)
	}
	t1 := time.Now()
	if e.afterInsert != nil {
		e.afterInsert(len(cuts))
	}
	defer func() {
		e.log.Debugf("cut: %d flows: sets %v, conntrack deletes %v", len(cuts), t1.Sub(t0), time.Since(t1))
	}()
	e.record(cuts)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return cuts, e.finishCuts(cuts)
}

// newCuts appends a cut for every TCP and UDP flow with a usable tuple;
// why(i) gives the reason and trigger of flows[i]. The caller holds e.mu.
func (e *Engine) newCuts(cuts []cut.Cut, flows []netstate.Flow, why func(i int) (reason, trigger string)) []cut.Cut {
	for i, f := range flows {
		if f.Proto != "tcp" && f.Proto != "udp" {
			continue
		}
		if _, _, _, err := cut.ParseTuple(f.Original); err != nil {
			continue
		}
		reason, trigger := why(i)
		if f.ID != 0 {
			if len(e.cutIDs) >= 4*e.cfg.SetSize {
				clear(e.cutIDs) // destroy events were lost: start again
			}
			e.cutIDs[f.ID] = struct{}{}
		}
		cuts = append(cuts, cut.Cut{
			Original: f.Original, Reply: f.Reply, Reason: reason, Trigger: trigger,
			Since: e.nowFn(), ExpiresIn: e.cfg.Expiry, Expires: e.cfg.Expiry.Seconds(),
		})
	}
	return cuts
}

// record makes cuts known, in the same hold of e.mu as their insert: a
// release (a list that dropped their address) then finds them. The
// caller holds e.mu.
func (e *Engine) record(cuts []cut.Cut) {
	for _, c := range cuts {
		if c.InFastpath {
			e.cuts[c.Original.String()] = &record{Cut: c, keys: []string{c.Original.String(), c.Reply.String()}}
		} else {
			e.cuts[c.Original.String()] = &record{Cut: c} // reported for one expiry
		}
	}
}

// finishCuts deletes the conntrack entries of recorded cuts, then logs
// one line per trigger; a cut released since its insert keeps its entry.
// The caller holds e.mu.
func (e *Engine) finishCuts(cuts []cut.Cut) error {
	debug := e.log.Logger.IsLevelEnabled(logger.DebugLevel)
	var kept []cut.Cut
	var del []netstate.Flow
	for _, c := range cuts {
		if e.cuts[c.Original.String()] == nil {
			continue // released since
		}
		kept = append(kept, c)
		del = append(del, netstate.Flow{Original: c.Original, Reply: c.Reply})
		if debug {
			e.log.WithFields(map[string]any{"original": c.Original.String(), "reply": c.Reply.String(), "in_fastpath": c.InFastpath}).Debug("cut")
		}
	}
	cuts = kept
	var errs []error
	for i, err := range e.ct.DeleteMany(del) {
		c := cuts[i]
		switch {
		case err == nil, errors.Is(err, os.ErrNotExist):
		case errors.Is(err, conntrack.ErrOffloadedBusy):
			if c.InFastpath {
				e.note(fmt.Sprintf("cut %s: %v; its frames are dropped at ingress meanwhile", c.Original, err))
			} else {
				e.note(fmt.Sprintf("cut %s: %v; with no room in the cut set it is NOT cut until then", c.Original, err))
				errs = append(errs, err)
			}
		default:
			errs = append(errs, err)
		}
	}
	for _, g := range byTrigger(cuts) {
		e.log.WithFields(map[string]any{"connections": g.n, "reason": g.reason, "trigger": g.trigger}).Info("cut")
	}
	if len(errs) > 0 {
		return fmt.Errorf("cut: %d of %d conntrack deletes failed, first: %w", len(errs), len(cuts), errs[0])
	}
	return nil
}

type triggerGroup struct {
	trigger, reason string // reason: of the group's last cut
	n               int
}

// byTrigger counts cuts by trigger, sorted by trigger.
func byTrigger(cuts []cut.Cut) []triggerGroup {
	var groups []triggerGroup
	at := map[string]int{}
	for _, c := range cuts {
		i, ok := at[c.Trigger]
		if !ok {
			i = len(groups)
			at[c.Trigger] = i
			groups = append(groups, triggerGroup{trigger: c.Trigger})
		}
		groups[i].n++
		groups[i].reason = c.Reason
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].trigger < groups[j].trigger })
	return groups
}

// insertChunk bounds how many cuts go in one netlink batch: one message
// must stay below the socket's size limit. 256 cuts are at most 512
// elements, about 35 KB for IPv6 (68 bytes each): a sixth of the default
// send buffer (212,992 bytes; about 116 KB on 32-bit routers). Against
// 128 it saves commits when a thousand flows are cut at once.
const insertChunk = 256

// insert adds both tuples of every cut to the sets, in batches; the first
// batch that goes in attaches the ingress chains that are missing. When a
// batch fails because a set is full, it adds that batch cut by cut, so
// what fits is dropped in the fast path and the rest falls back to
// conntrack deletion alone.
func (e *Engine) insert(cuts []cut.Cut) {
	var run insertRun
	e.insertMore(&run, cuts)
	e.insertDone(&run)
}

// insertRun carries what one cut learns across the batches it inserts:
// once a set is full, later batches go in cut by cut.
type insertRun struct {
	full int // cuts that did not fit
}

// insertMore inserts cuts as part of run. The caller holds e.mu.
func (e *Engine) insertMore(run *insertRun, cuts []cut.Cut) {
	for lo := 0; lo < len(cuts); lo += insertChunk {
		hi := min(lo+insertChunk, len(cuts))
		chunk := cuts[lo:hi]
		e.clearReleased(chunk)
		if run.full > 0 {
			run.full += e.insertOneByOne(chunk)
			continue
		}
		err := e.flushWithChains(func() error { return e.queue(chunk) })
		switch {
		case err == nil:
			for i := range chunk {
				chunk[i].InFastpath = true
			}
		case isSetFull(err):
			run.full += e.insertOneByOne(chunk)
		default:
			e.note(fmt.Sprintf("cut: adding %d cut(s) to the sets failed: %v; they fall back to conntrack deletion", len(chunk), err))
		}
		e.xdpInsert(chunk)
	}
}

// insertDone schedules the idle check and reports a full set, once per
// run. The caller holds e.mu.
func (e *Engine) insertDone(run *insertRun) {
	e.scheduleIdleCheckAfterInsert()
	if run.full > 0 {
		e.note(fmt.Sprintf("cut: the cut sets are full (cut_set_size %d): %d cut(s) fell back to conntrack deletion only; raise fastpath.main.cut_set_size", e.cfg.SetSize, run.full))
	}
}

// insertOneByOne adds cuts one batch each and returns how many did not fit.
func (e *Engine) insertOneByOne(cuts []cut.Cut) (full int) {
	for i := range cuts {
		err := e.flushWithChains(func() error { return e.queue(cuts[i : i+1]) })
		if err == nil {
			cuts[i].InFastpath = true
			continue
		}
		full++
	}
	return full
}

// queue puts the original and reply tuples of cuts in the pending batch,
// one message per set.
func (e *Engine) queue(cuts []cut.Cut) error {
	var els4, els6 []nftables.SetElement
	for _, c := range cuts {
		for _, t := range []cut.Tuple{c.Original, c.Reply} {
			key, v6, err := cut.Key(t)
			if err != nil {
				return fmt.Errorf("cut %s: %w", c.Original, err)
			}
			el := nftables.SetElement{Key: key, Timeout: e.cfg.Expiry}
			if v6 {
				els6 = append(els6, el)
			} else {
				els4 = append(els4, el)
			}
		}
	}
	if len(els4) > 0 {
		if err := e.nft.SetAddElements(e.set4, els4); err != nil {
			return err
		}
	}
	if len(els6) > 0 {
		if err := e.nft.SetAddElements(e.set6, els6); err != nil {
			return err
		}
	}
	return nil
}
