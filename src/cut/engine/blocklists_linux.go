//go:build linux

package engine

import (
	"context"
	"errors"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/cut/blocklist"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/nftevents"
)

// UseEvents makes block-list watches read nftables notifications from
// hub, the daemon's one socket on them, instead of a socket of their own.
func (e *Engine) UseEvents(hub *nftevents.Hub) {
	e.mu.Lock()
	e.events = hub
	e.mu.Unlock()
}

// WatchBlocklists cuts what the block lists of cfg name (package
// blocklist follows them): once they are read, the connections whose far
// end is listed; until ctx ends, those of an address a list gains, every
// new conntrack entry of a listed address as it appears, and the release
// of cuts whose address no list holds any more. The netlink sockets are
// opened before WatchBlocklists returns control to any other goroutine,
// in the caller's network namespace.
func (e *Engine) WatchBlocklists(ctx context.Context, cfg cut.Config) error {
	cfg, err := cfg.Normalized()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Sockets first, so nothing added between the lists' read and the
	// first event is missed.
	sub, err := e.ct.Subscribe()
	if err != nil {
		return err
	}
	e.mu.Lock()
	hub := e.events
	e.mu.Unlock()
	w, err := blocklist.Open(ctx, cfg, hub)
	if err != nil {
		return err
	}
	defer w.Close()
	// What changed while no watch ran: cuts of addresses no longer
	// listed are released, and what is listed is cut.
	e.lists.Store(w.Lists())
	e.releaseUnlisted(ctx)
	flows := &blocklist.Tracked{}
	if err := e.cutListed(ctx, nil, flows); err != nil {
		e.log.WithError(err).Warn("cut: initial block-list cut")
	}

	errc := make(chan error, 2)
	go func() {
		errc <- sub.Run(ctx, func(ev conntrack.Event) {
			gone := ev.Type == conntrack.EventDestroy
			flows.Event(ev.Flow.ID, blocklist.AddrsOf(ev.Flow), gone)
			if gone {
				e.forgetEntry(ev.Flow.ID)
			} else {
				e.cutNewFlow(ctx, ev.Flow)
			}
		})
	}()
	go e.cutAdded(ctx, w, flows)
	go func() { errc <- w.Run(func() { e.releaseUnlisted(ctx) }) }()
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
}

// cutAdded cuts the connections of what the lists gained, one conntrack
// pass for all that came since the last, and none when no tracked
// connection has such an address.
func (e *Engine) cutAdded(ctx context.Context, w *blocklist.Watch, flows *blocklist.Tracked) {
	for {
		added, ok := w.Added()
		if !ok {
			return
		}
		if !flows.AnyIn(added) {
			continue
		}
		if err := e.cutListed(ctx, &added, flows); err != nil {
			e.log.WithError(err).Warn("cut: block-list addition")
		}
	}
}

// cutNewFlow cuts a connection conntrack just created if an end of it is
// listed: a listed sender that opens a new flow is cut as it appears.
func (e *Engine) cutNewFlow(ctx context.Context, f netstate.Flow) {
	if f.Proto != "tcp" && f.Proto != "udp" {
		return
	}
	hit, ok := e.lists.Load().Listed(blocklist.AddrsOf(f), nil)
	if !ok || e.wasCut(f.ID) {
		return
	}
	if e.beforeNewCut != nil {
		e.beforeNewCut()
	}
	if _, err := e.cutFlows(ctx, []netstate.Flow{f}, hit.Reason(" (new connection)"), hit.Trigger, false, "address"); err != nil && !isRefused(err) {
		e.log.WithError(err).Warn("cut: new connection of a listed address")
	}
}

// wasCut reports whether a pass already cut the conntrack entry id: its
// new event, read late (events queue while a pass runs), is then stale.
func (e *Engine) wasCut(id uint32) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.cutIDs[id]
	return ok
}

// forgetEntry drops a destroyed entry from the ids cut.
func (e *Engine) forgetEntry(id uint32) {
	e.mu.Lock()
	delete(e.cutIDs, id)
	e.mu.Unlock()
}

// releaseUnlisted releases the block-list cuts none of whose addresses
// any list holds now: an address a list dropped (a deleted element, set
// or table, a line gone from a file) is let through again at once.
func (e *Engine) releaseUnlisted(ctx context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	lists := e.lists.Load()
	var gone []cut.Cut
	for _, r := range e.cuts {
		if !strings.HasPrefix(r.Trigger, "blocklist:") {
			continue
		}
		if _, ok := lists.Listed(blocklist.AddrsOf(netstate.Flow{Original: r.Original, Reply: r.Reply}), nil); !ok {
			gone = append(gone, r.Cut)
		}
	}
	if len(gone) == 0 {
		return
	}
	n, err := e.releaseMatching(ctx, gone, func(cut.Cut) bool { return true })
	if err != nil {
		e.log.WithError(err).Warn("cut: release of addresses no longer listed")
	}
	e.log.WithField("connections", n).Info("cut: released, their addresses are no longer listed")
	e.checkIdle()
}

func isRefused(err error) bool {
	var r *cut.RefusedError
	return errors.As(err, &r)
}
