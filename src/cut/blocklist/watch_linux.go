//go:build linux

package blocklist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/nftevents"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// nftFamilies maps the family names of /etc/config/fastpath to nfproto.
var nftFamilies = map[string]uint8{
	"inet": unix.NFPROTO_INET, "ip": unix.NFPROTO_IPV4, "ip6": unix.NFPROTO_IPV6,
	"bridge": unix.NFPROTO_BRIDGE, "netdev": unix.NFPROTO_NETDEV, "arp": unix.NFPROTO_ARP,
}

// Watch follows the block lists of one config: nftables sets through
// their set-element notifications, files through inotify on their
// directory (so an atomic rename is seen), UCI lists as configured.
type Watch struct {
	lists *Lists
	ctx   context.Context
	nft   []cut.BlocklistConfig // the sets watched
	// presets follow the sets of a tool (banIP, CrowdSec) as they come.
	presets []*preset
	hub     *nftevents.Hub
	sets    *nftevents.Sub
	read    *setReader // in the namespace Open ran in
	ino     *os.File

	// The addresses lists gained wait in added until Added takes them, so
	// a burst of notifications costs the engine one conntrack pass, not
	// one per element.
	mu    sync.Mutex
	added Set
	wake  chan struct{}
}

// Open reads every block list of cfg (normalized) and opens what follows
// them: the sockets first, so nothing added between the read and the
// first notification is missed, all in the caller's network namespace.
// hub is the daemon's socket on nftables notifications; nil: one of the
// watch's own, read until ctx ends. Call Close when done.
func Open(ctx context.Context, cfg cut.Config, hub *nftevents.Hub) (*Watch, error) {
	byName := map[string]*listState{}
	w := &Watch{ctx: ctx, wake: make(chan struct{}, 1)}
	dirs := map[string]bool{}
	for _, b := range cfg.Blocklists {
		l := newListState(b)
		l.minBits = [2]int{cfg.MinPrefix4, cfg.MinPrefix6}
		byName[b.Name] = l
		switch b.Kind {
		case cut.KindNftSet:
			if _, ok := nftFamilies[b.Family]; !ok {
				l.problems = append(l.problems, fmt.Sprintf("family %q: use inet, ip, ip6, bridge, netdev or arp", b.Family))
				continue
			}
			w.nft = append(w.nft, b)
		case cut.KindBanIP, cut.KindCrowdSec:
			w.presets = append(w.presets, l.preset)
		case cut.KindFile:
			dirs[filepath.Dir(b.Path)] = true
		}
	}
	if len(w.nft) > 0 || len(w.presets) > 0 {
		if hub == nil {
			var err error
			if hub, err = nftevents.Open(0); err != nil {
				return nil, fmt.Errorf("watch nftables sets: %w", err)
			}
			go hub.Run(ctx)
		}
		w.hub, w.sets = hub, hub.Subscribe()
		if err := w.sets.Err(); err != nil {
			w.Close()
			return nil, fmt.Errorf("watch nftables sets: %w", err)
		}
		var err error
		if w.read, err = openSetReader(); err != nil {
			w.Close()
			return nil, fmt.Errorf("read nftables sets: %w", err)
		}
	}
	if len(dirs) > 0 {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("watch block-list files: inotify: %w", err)
		}
		w.ino = os.NewFile(uintptr(fd), "inotify")
		for d := range dirs {
			if _, err := unix.InotifyAddWatch(fd, d, unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO|unix.IN_CREATE|unix.IN_DELETE|unix.IN_MOVED_FROM); err != nil {
				for _, b := range cfg.Blocklists {
					if b.Kind == cut.KindFile && filepath.Dir(b.Path) == d {
						byName[b.Name].problems = append(byName[b.Name].problems, fmt.Sprintf("watch directory %s: %v (create it; changes are not seen until then)", d, err))
					}
				}
			}
		}
	}

	// Initial read: what the sources hold now, also what changed while no
	// watch ran.
	for _, name := range sortedKeys(byName) {
		l := byName[name]
		switch l.cfg.Kind {
		case cut.KindList:
			ps, problems := cut.ParseAddresses(l.cfg.Addresses, "blocklist "+l.cfg.Name)
			l.problems = append(l.problems, problems...)
			l.replacePrefixes(ps)
		case cut.KindFile:
			ps, problems := readListFile(l.cfg)
			l.problems = append(l.problems, problems...)
			l.replacePrefixes(ps)
		}
	}
	w.lists = newLists(byName)
	if w.read != nil {
		w.readSets() // the sets, and those of presets
	}
	return w, nil
}

// Lists is what the lists hold now, kept up to date by Run.
func (w *Watch) Lists() *Lists { return w.lists }

// Close closes the watch's sockets.
func (w *Watch) Close() {
	if w.sets != nil {
		w.sets.Close()
	}
	if w.ino != nil {
		w.ino.Close()
	}
	if w.read != nil {
		w.read.close()
	}
}

// Run follows the lists until ctx (Open's) ends or a source fails. When a
// change drops an address from the lists, removed runs, in Run's
// goroutine and with no lock held, after Lists stopped listing it: a
// release it makes then finds every cut of it. What the lists gain
// waits for Added.
func (w *Watch) Run(removed func()) error {
	errc := make(chan error, 2)
	if w.sets != nil {
		go func() { errc <- w.watchSets(removed) }()
	}
	if w.ino != nil {
		go func() { errc <- w.watchFiles(removed) }()
	}
	select {
	case <-w.ctx.Done():
		return nil
	case err := <-errc:
		if w.ctx.Err() != nil {
			return nil
		}
		return err
	}
}

// Added waits for the addresses the lists gained since its last return,
// all that came meanwhile at once; false once ctx (Open's) ended.
func (w *Watch) Added() (Set, bool) {
	for {
		select {
		case <-w.ctx.Done():
			return Set{}, false
		case <-w.wake:
		}
		w.mu.Lock()
		added := w.added
		w.added = Set{}
		w.mu.Unlock()
		if !added.empty() {
			return added, true
		}
	}
}

// changed hands on what a change did to the lists: removed runs at
// once; the addresses listed go to Added.
func (w *Watch) changed(d delta, removed func()) {
	if d.removed {
		removed()
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

// watchSets follows the notifications of the watched sets: elements
// added and deleted, the set or its table deleted or created. A
// transaction's changes apply when it commits (NEWGEN), so banIP's reload
// (delete the set, create it again, fill it, in one transaction) drops
// only what the new set lacks and adds only what it lists.
func (w *Watch) watchSets(removed func()) error {
	ls := w.lists
	sub := w.sets
	dirty := map[string]bool{}
	defer func() { sub.Close() }() // the latest subscription
	expiries := newRereadTimer()
	defer expiries.stop()
	expiries.arm(ls.nextReread())
	var prev setEvent // the last notification: its array and names are reused
	for {
		var msgs []netlink.Message
		select {
		case <-w.ctx.Done():
			return nil
		case <-expiries.c():
			if len(dirty) == 0 { // else after the commit
				w.rereadDue(removed)
				expiries.arm(ls.nextReread())
			}
			continue
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
			sub = w.hub.Subscribe()
			if err := sub.Err(); err != nil {
				return fmt.Errorf("watch nftables sets: %w", err)
			}
			clear(dirty)
			w.changed(w.readSets(), removed)
			expiries.arm(ls.nextReread())
			continue
		}
		for _, m := range msgs {
			ev, err := parseSetEventAfter(uint16(m.Header.Type), m.Data, prev)
			if err != nil {
				continue
			}
			prev = ev
			if ev.Kind == committed {
				if len(dirty) > 0 {
					w.commit(dirty, removed)
					clear(dirty)
				}
				continue
			}
			now := time.Now()
			ls.mu.Lock()
			for _, l := range w.affected(ev) {
				name := l.cfg.Name
				switch ev.Kind {
				case elemsAdded:
					if l.cover.len()+len(l.pending)/2 >= cut.MaxListEntries { // ranges: a cheap lower bound of the entries
						l.problems = boundedProblems(l.problems, []string{fmt.Sprintf("blocklist %s: more than %d entries (MaxListEntries): later additions are not followed; split the set", name, cut.MaxListEntries)})
						break
					}
					l.exp.note(ev.Elems, now)
					fallthrough
				case elemsDeleted:
					if problems := l.queue(ev.Elems, ev.Kind == elemsAdded); len(problems) > 0 {
						l.problems = boundedProblems(l.problems, problems)
					}
				case setAdded:
					l.interval, l.problems, l.gone = ev.Interval, nil, false
				case setDeleted, tableDeleted:
					l.dropAll(l.interval)
					if l.parent != nil {
						l.gone = true // dropped at the commit unless made again
						break
					}
					l.problems = []string{fmt.Sprintf("set %s was deleted (watching for it; additions are cut once it exists again)", l.source)}
				}
				dirty[name] = true
			}
			ls.mu.Unlock()
		}
		if len(dirty) == 0 {
			expiries.arm(ls.nextReread())
		}
	}
}

// commit applies the changes of one transaction to the lists it touched.
func (w *Watch) commit(dirty map[string]bool, removed func()) {
	ls := w.lists
	var d delta
	ls.mu.Lock()
	for name := range dirty {
		if l := ls.byName[name]; l != nil {
			d.join(l.commit())
			if l.gone {
				ls.drop(name)
			}
		}
	}
	ls.changed(d)
	ls.mu.Unlock()
	w.changed(d, removed)
}

// watchFiles reloads file block lists when their directory reports a
// change to them. Files are read with no lock held: a slow or stuck
// reader delays only this watch.
func (w *Watch) watchFiles(removed func()) error {
	ino := w.ino
	go func() { <-w.ctx.Done(); ino.Close() }()
	ls := w.lists
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
		ls.mu.RLock()
		var files []cut.BlocklistConfig
		for _, name := range sortedKeys(ls.byName) {
			if c := ls.byName[name].cfg; c.Kind == cut.KindFile && changed[filepath.Base(c.Path)] {
				files = append(files, c)
			}
		}
		ls.mu.RUnlock()
		var d delta
		for _, c := range files {
			ps, problems := readListFile(c)
			ls.mu.Lock()
			l := ls.byName[c.Name]
			l.problems = problems
			d.join(l.replacePrefixes(ps))
			ls.changed(d)
			ls.mu.Unlock()
		}
		w.changed(d, removed)
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
