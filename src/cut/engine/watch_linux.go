//go:build linux

package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/nftevents"
	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// nftFamilies maps the family names of /etc/config/fastpath to nfproto.
var nftFamilies = map[string]uint8{
	"inet": unix.NFPROTO_INET, "ip": unix.NFPROTO_IPV4, "ip6": unix.NFPROTO_IPV6,
	"bridge": unix.NFPROTO_BRIDGE, "netdev": unix.NFPROTO_NETDEV, "arp": unix.NFPROTO_ARP,
}

// UseEvents makes block-list watches read nftables notifications from
// hub, the daemon's one socket on them, instead of a socket of their own.
func (e *Engine) UseEvents(hub *nftevents.Hub) {
	e.listMu.Lock()
	e.events = hub
	e.listMu.Unlock()
}

// WatchBlocklists reads every block list of cfg, cuts the connections
// whose far end is listed, and then, until ctx ends, cuts again whenever
// an address is added: nftables sets through their set-element
// notifications, files through inotify on their directory (so an atomic
// rename is seen), and new conntrack entries of listed addresses as they
// appear. The netlink sockets are opened before WatchBlocklists returns
// control to any other goroutine, in the caller's network namespace.
func (e *Engine) WatchBlocklists(ctx context.Context, cfg cut.Config) error {
	cfg, err := cfg.Normalized()
	if err != nil {
		return err
	}
	lists := map[string]*listState{}
	var nftNames []cut.BlocklistConfig
	dirs := map[string]bool{}
	for _, b := range cfg.Blocklists {
		lists[b.Name] = newListState(b)
		lists[b.Name].minBits = [2]int{cfg.MinPrefix4, cfg.MinPrefix6}
		switch b.Kind {
		case cut.KindNftSet:
			if _, ok := nftFamilies[b.Family]; !ok {
				lists[b.Name].problems = append(lists[b.Name].problems, fmt.Sprintf("family %q: use inet, ip, ip6, bridge, netdev or arp", b.Family))
				continue
			}
			nftNames = append(nftNames, b)
		case cut.KindFile:
			dirs[filepath.Dir(b.Path)] = true
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 3)

	// Sockets first, so nothing added between the initial read and the
	// first event is missed.
	var sets *nftevents.Sub
	var hub *nftevents.Hub
	if len(nftNames) > 0 {
		e.listMu.RLock()
		hub = e.events
		e.listMu.RUnlock()
		if hub == nil {
			if hub, err = nftevents.Open(0); err != nil {
				return fmt.Errorf("watch nftables sets: %w", err)
			}
			go hub.Run(ctx)
		}
		sets = hub.Subscribe()
		defer sets.Close()
		if err := sets.Err(); err != nil {
			return fmt.Errorf("watch nftables sets: %w", err)
		}
	}
	sub, err := e.ct.Subscribe()
	if err != nil {
		return err
	}
	var ino *os.File
	if len(dirs) > 0 {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
		if err != nil {
			return fmt.Errorf("watch block-list files: inotify: %w", err)
		}
		ino = os.NewFile(uintptr(fd), "inotify")
		defer ino.Close()
		for d := range dirs {
			if _, err := unix.InotifyAddWatch(fd, d, unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO|unix.IN_CREATE|unix.IN_DELETE|unix.IN_MOVED_FROM); err != nil {
				for _, b := range cfg.Blocklists {
					if b.Kind == cut.KindFile && filepath.Dir(b.Path) == d {
						lists[b.Name].problems = append(lists[b.Name].problems, fmt.Sprintf("watch directory %s: %v (create it; changes are not seen until then)", d, err))
					}
				}
			}
		}
	}

	// Initial read: what the sources hold now, also what changed while no
	// watch ran (cuts of addresses no longer listed are released).
	w := &watcher{e: e, ctx: ctx, flows: &flowTable{}, wake: make(chan struct{}, 1)}
	for _, name := range sortedKeys(lists) {
		l := lists[name]
		switch l.cfg.Kind {
		case cut.KindList:
			ps, problems := cut.ParseAddresses(l.cfg.Addresses, "blocklist "+l.cfg.Name)
			l.problems = append(l.problems, problems...)
			l.replacePrefixes(ps)
		case cut.KindFile:
			ps, problems := readListFile(l.cfg)
			l.problems = append(l.problems, problems...)
			l.replacePrefixes(ps)
		case cut.KindNftSet:
			if _, ok := nftFamilies[l.cfg.Family]; !ok {
				continue
			}
			els, interval, problem := readSet(l.cfg)
			if problem != "" {
				l.problems = []string{problem}
				continue
			}
			els, bound := boundElems(els, interval, l.cfg.Name)
			_, l.problems = l.load(els, interval)
			if bound != "" {
				l.problems = append(l.problems, bound)
			}
		}
	}
	e.listMu.Lock()
	e.lists, e.index = lists, buildIndex(lists)
	e.listMu.Unlock()
	e.releaseUnlisted(ctx)
	if err := e.cutListed(ctx, nil, w.flows); err != nil {
		e.log.WithError(err).Warn("cut: initial block-list cut")
	}

	go func() {
		errc <- sub.Run(ctx, func(ev conntrack.Event) {
			gone := ev.Type == conntrack.EventDestroy
			w.flows.event(ev.Flow.ID, addrsOf(ev.Flow), gone)
			if gone {
				e.forgetEntry(ev.Flow.ID)
			} else {
				e.cutNewFlow(ctx, ev.Flow)
			}
		})
	}()
	go w.cutAdded()
	if sets != nil {
		go func() { errc <- w.watchSets(hub, sets, nftNames) }()
	}
	if ino != nil {
		go func() { errc <- w.watchFiles(ino) }()
	}
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

// watcher is one run of WatchBlocklists: the addresses lists gained wait
// in added until the goroutine that cuts takes them, so a burst of
// notifications costs one conntrack pass, not one per element.
type watcher struct {
	e     *Engine
	ctx   context.Context
	flows *flowTable

	mu    sync.Mutex
	added addrSet
	wake  chan struct{}
}

// changed takes what a change did to the lists: an address no longer
// listed has its cuts released now; addresses listed go to the cutter.
func (w *watcher) changed(d delta) {
	if d.removed {
		w.e.releaseUnlisted(w.ctx)
	}
	if d.added.empty() {
		return
	}
	w.mu.Lock()
	w.added = unionSet(w.added, d.added)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// cutAdded cuts the connections of what the lists gained, one conntrack
// pass for all that came since the last, and none when no tracked
// connection has such an address.
func (w *watcher) cutAdded() {
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-w.wake:
		}
		w.mu.Lock()
		added := w.added
		w.added = addrSet{}
		w.mu.Unlock()
		if !w.flows.anyIn(added) {
			continue
		}
		if err := w.e.cutListed(w.ctx, &added, w.flows); err != nil {
			w.e.log.WithError(err).Warn("cut: block-list addition")
		}
	}
}

// readSet reads a watched nftables set through a dump; problem says why
// it could not.
func readSet(b cut.BlocklistConfig) (els []rawElem, interval bool, problem string) {
	conn, err := nftables.New()
	if err == nil {
		t := &nftables.Table{Name: b.Table, Family: nftables.TableFamily(nftFamilies[b.Family])}
		var set *nftables.Set
		set, err = conn.GetSetByName(t, b.Set)
		if err == nil {
			if els, err = dumpSetElements(nftFamilies[b.Family], b.Table, b.Set); err == nil {
				return els, set.Interval, ""
			}
		}
	}
	return nil, false, fmt.Sprintf("set %s %s %s: %v (watching for it; additions are cut once it exists)", b.Family, b.Table, b.Set, err)
}

// watchSets follows the notifications of the watched sets: elements
// added and deleted, the set or its table deleted or created. A
// transaction's changes apply when it commits (NEWGEN), so banIP's reload
// (delete the set, create it again, fill it, in one transaction) releases
// only what the new set lacks and cuts only what it lists.
func (w *watcher) watchSets(hub *nftevents.Hub, sub *nftevents.Sub, watched []cut.BlocklistConfig) error {
	e := w.e
	dirty := map[string]bool{}
	defer func() { sub.Close() }() // the latest subscription
	for {
		var msgs []netlink.Message
		select {
		case <-w.ctx.Done():
			return nil
		case m, ok := <-sub.Messages():
			if ok {
				msgs = m
				break
			}
			if w.ctx.Err() != nil {
				return nil
			}
			// Notifications were lost (a burst of additions): subscribe
			// again, then read the sets again.
			if err := sub.Err(); !errors.Is(err, nftevents.ErrLost) {
				return fmt.Errorf("watch nftables sets: %v", err)
			}
			sub = hub.Subscribe()
			if err := sub.Err(); err != nil {
				return fmt.Errorf("watch nftables sets: %w", err)
			}
			clear(dirty)
			w.resyncSets(watched)
			continue
		}
		for _, m := range msgs {
			ev, err := parseSetEvent(uint16(m.Header.Type), m.Data)
			if err != nil {
				continue
			}
			if ev.Kind == committed {
				if len(dirty) > 0 {
					w.commit(dirty)
					clear(dirty)
				}
				continue
			}
			for _, b := range watched {
				if ev.Family != nftFamilies[b.Family] || ev.Table != b.Table || (ev.Kind != tableDeleted && ev.Set != b.Set) {
					continue
				}
				e.listMu.Lock()
				l := e.lists[b.Name]
				switch ev.Kind {
				case elemsAdded:
					if l.cover.len()+len(l.pending)/2 >= cut.MaxListEntries { // ranges: a cheap lower bound of the entries
						l.problems = boundedProblems(l.problems, []string{fmt.Sprintf("blocklist %s: more than %d entries (MaxListEntries): later additions are not followed; split the set", b.Name, cut.MaxListEntries)})
						break
					}
					fallthrough
				case elemsDeleted:
					if problems := l.queue(ev.Elems, ev.Kind == elemsAdded); len(problems) > 0 {
						l.problems = boundedProblems(l.problems, problems)
					}
				case setAdded:
					l.interval, l.problems = ev.Interval, nil
				case setDeleted, tableDeleted:
					l.dropAll(l.interval)
					l.problems = []string{fmt.Sprintf("set %s was deleted (watching for it; additions are cut once it exists again)", l.source)}
				}
				e.listMu.Unlock()
				dirty[b.Name] = true
			}
		}
	}
}

// commit applies the changes of one transaction to the lists it touched.
func (w *watcher) commit(dirty map[string]bool) {
	e := w.e
	var d delta
	e.listMu.Lock()
	for name := range dirty {
		if l := e.lists[name]; l != nil {
			d.join(l.commit())
		}
	}
	e.indexChanged(d)
	e.listMu.Unlock()
	w.changed(d)
}

// indexChanged brings the index up to date after d. The caller holds
// e.listMu.
func (e *Engine) indexChanged(d delta) {
	switch {
	case e.index == nil || d.removed:
		e.index = buildIndex(e.lists)
	case !d.added.empty():
		e.index.extend(d.added)
	}
}

// resyncSets reads the watched sets again after lost notifications.
func (w *watcher) resyncSets(watched []cut.BlocklistConfig) {
	e := w.e
	var d delta
	for _, b := range watched {
		els, interval, problem := readSet(b)
		e.listMu.Lock()
		l := e.lists[b.Name]
		if problem != "" {
			d.join(l.replace(addrSet{}, 0))
			l.pts, l.pending, l.reset = [2]pointSet{}, nil, false
			l.problems = []string{problem}
		} else {
			els, bound := boundElems(els, interval, b.Name)
			ld, problems := l.load(els, interval)
			d.join(ld)
			if l.problems = problems; bound != "" {
				l.problems = append(l.problems, bound)
			}
		}
		e.indexChanged(d)
		e.listMu.Unlock()
	}
	w.changed(d)
}

// watchFiles reloads file block lists when their directory reports a
// change to them. Files are read with no lock held: a slow or stuck
// reader delays only this watch.
func (w *watcher) watchFiles(ino *os.File) error {
	go func() { <-w.ctx.Done(); ino.Close() }()
	e := w.e
	buf := make([]byte, 64*1024)
	for {
		n, err := ino.Read(buf)
		if err != nil {
			if w.ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("watch block-list files: %w", err)
		}
		changed := map[string]bool{}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameBytes := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			changed[strings.TrimRight(string(nameBytes), "\x00")] = true
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
		e.listMu.RLock()
		var files []cut.BlocklistConfig
		for _, name := range sortedKeys(e.lists) {
			if c := e.lists[name].cfg; c.Kind == cut.KindFile && changed[filepath.Base(c.Path)] {
				files = append(files, c)
			}
		}
		e.listMu.RUnlock()
		var d delta
		for _, c := range files {
			ps, problems := readListFile(c)
			e.listMu.Lock()
			l := e.lists[c.Name]
			l.problems = problems
			d.join(l.replacePrefixes(ps))
			e.indexChanged(d)
			e.listMu.Unlock()
		}
		w.changed(d)
	}
}

// maxListProblems bounds the problems kept per list.
const maxListProblems = 100

// boundedProblems appends more to have, up to maxListProblems, once each.
func boundedProblems(have, more []string) []string {
	for _, p := range more {
		if len(have) >= maxListProblems {
			break
		}
		if !slices.Contains(have, p) {
			have = append(have, p)
		}
	}
	return have
}

// cutNewFlow cuts a connection conntrack just created if an end of it is
// listed: a listed sender that opens a new flow is cut as it appears.
func (e *Engine) cutNewFlow(ctx context.Context, f netstate.Flow) {
	if f.Proto != "tcp" && f.Proto != "udp" {
		return
	}
	e.listMu.RLock()
	hit, ok := flowListed(e.listIndex(), addrsOf(f), nil)
	e.listMu.RUnlock()
	if !ok || e.wasCut(f.ID) {
		return
	}
	if e.beforeNewCut != nil {
		e.beforeNewCut()
	}
	if _, err := e.cutFlows(ctx, []netstate.Flow{f}, hit.reason(" (new connection)"), hit.trigger, false, "address"); err != nil && !isRefused(err) {
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

// flowListed looks the addresses of a flow up in an index; with only, an
// address counts only if it is in only too.
func flowListed(ix *listIndex, fa flowAddrs, only *addrSet) (listing, bool) {
	for _, a := range fa.a[:fa.n] {
		if !ix.has(a) || only != nil && !only.has(a) {
			continue
		}
		if l, ok := ix.lookup(a); ok {
			l.addr = a
			return l, true
		}
	}
	return listing{}, false
}

// releaseUnlisted releases the block-list cuts none of whose addresses
// any list holds now: an address a list dropped (a deleted element, set
// or table, a line gone from a file) is let through again at once.
func (e *Engine) releaseUnlisted(ctx context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.listMu.RLock()
	ix := e.listIndex()
	var gone []cut.Cut
	for _, r := range e.cuts {
		if !strings.HasPrefix(r.Trigger, "blocklist:") {
			continue
		}
		if _, ok := flowListed(ix, addrsOf(netstate.Flow{Original: r.Original, Reply: r.Reply}), nil); !ok {
			gone = append(gone, r.Cut)
		}
	}
	e.listMu.RUnlock()
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
