//go:build linux

package engine

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/status"
	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// nftFamilies maps the family names of /etc/config/fastpath to nfproto.
var nftFamilies = map[string]uint8{
	"inet": unix.NFPROTO_INET, "ip": unix.NFPROTO_IPV4, "ip6": unix.NFPROTO_IPV6,
	"bridge": unix.NFPROTO_BRIDGE, "netdev": unix.NFPROTO_NETDEV, "arp": unix.NFPROTO_ARP,
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
	var nl *netlink.Conn
	if len(nftNames) > 0 {
		nl, err = netlink.Dial(unix.NETLINK_NETFILTER, nil)
		if err != nil {
			return fmt.Errorf("watch nftables sets: %w", err)
		}
		defer nl.Close()
		_ = nl.SetReadBuffer(8 << 20)
		if err := nl.JoinGroup(unix.NFNLGRP_NFTABLES); err != nil {
			return fmt.Errorf("watch nftables sets: join NFNLGRP_NFTABLES: %w", err)
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

	// Initial read.
	for _, name := range sortedKeys(lists) {
		l := lists[name]
		switch l.cfg.Kind {
		case cut.KindList:
			ps, problems := cut.ParseAddresses(l.cfg.Addresses, "blocklist "+l.cfg.Name)
			l.problems = append(l.problems, problems...)
			l.replace(ps)
		case cut.KindFile:
			e.readFile(l)
		case cut.KindNftSet:
			e.readSet(l)
		}
	}
	e.mu.Lock()
	e.lists, e.index = lists, nil
	e.mu.Unlock()
	if err := e.cutListed(ctx, nil); err != nil {
		e.log.WithError(err).Warn("cut: initial block-list cut")
	}

	go func() {
		errc <- sub.Run(ctx, func(ev conntrack.Event) {
			if ev.Type == conntrack.EventNew {
				e.cutNewFlow(ctx, ev.Flow)
			}
		})
	}()
	if nl != nil {
		go func() { errc <- e.watchSets(ctx, nl, nftNames) }()
	}
	if ino != nil {
		go func() { errc <- e.watchFiles(ctx, ino) }()
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

// readFile (re)loads a file block list and returns its new prefixes.
func (e *Engine) readFile(l *listState) []netip.Prefix {
	f, err := os.Open(l.cfg.Path)
	if err != nil {
		l.problems = []string{fmt.Sprintf("%v (the list is empty until the file exists)", err)}
		l.replace(nil)
		return nil
	}
	defer f.Close()
	ps, problems, err := cut.ParseBlocklist(f, l.cfg.Path)
	if err != nil {
		problems = append(problems, err.Error())
	}
	l.problems = problems
	return l.replace(ps)
}

// readSet loads a watched nftables set through a dump.
func (e *Engine) readSet(l *listState) {
	conn, err := nftables.New()
	if err == nil {
		t := &nftables.Table{Name: l.cfg.Table, Family: nftables.TableFamily(nftFamilies[l.cfg.Family])}
		var set *nftables.Set
		set, err = conn.GetSetByName(t, l.cfg.Set)
		if err == nil {
			var els []nftables.SetElement
			els, err = conn.GetSetElements(set)
			if err == nil {
				raw := make([]rawElem, len(els))
				for i, el := range els {
					raw[i] = rawElem{Key: el.Key, KeyEnd: el.KeyEnd, IntervalEnd: el.IntervalEnd}
				}
				ps, problems := elemPrefixes(raw)
				l.problems = problems
				l.replace(ps)
				return
			}
		}
	}
	l.problems = []string{fmt.Sprintf("set %s: %v (watching for it; additions are cut once it exists)", l.source, err)}
}

// watchSets follows set-element notifications of the watched sets.
func (e *Engine) watchSets(ctx context.Context, nl *netlink.Conn, watched []cut.BlocklistConfig) error {
	go func() { <-ctx.Done(); nl.Close() }()
	for {
		msgs, err := nl.Receive()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, unix.ENOBUFS) {
				// Notifications were lost (a burst of additions): read the sets again.
				e.resyncSets(ctx, watched)
				continue
			}
			return fmt.Errorf("watch nftables sets: %w", err)
		}
		for _, m := range msgs {
			ev, err := parseSetElemEvent(uint16(m.Header.Type), m.Data)
			if err != nil {
				continue
			}
			for _, w := range watched {
				if ev.Table != w.Table || ev.Set != w.Set || ev.Family != nftFamilies[w.Family] {
					continue
				}
				ps, _ := elemPrefixes(ev.Elems)
				e.mu.Lock()
				l := e.lists[w.Name]
				var added []netip.Prefix
				if ev.Delete {
					l.remove(ps)
				} else {
					added = l.add(ps)
				}
				e.index = nil
				e.mu.Unlock()
				if len(added) > 0 {
					if err := e.cutListed(ctx, added); err != nil {
						e.log.WithError(err).Warn("cut: block-list addition")
					}
				}
			}
		}
	}
}

func (e *Engine) resyncSets(ctx context.Context, watched []cut.BlocklistConfig) {
	var added []netip.Prefix
	for _, w := range watched {
		e.mu.Lock()
		l := e.lists[w.Name]
		before := l.prefixes
		e.mu.Unlock()
		fresh := newListState(w)
		e.readSet(fresh)
		e.mu.Lock()
		l.problems = fresh.problems
		l.prefixes = before
		added = append(added, l.replace(keys(fresh.prefixes))...)
		e.index = nil
		e.mu.Unlock()
	}
	if len(added) > 0 {
		_ = e.cutListed(ctx, added)
	}
}

// watchFiles reloads file block lists when their directory reports a
// change to them.
func (e *Engine) watchFiles(ctx context.Context, ino *os.File) error {
	go func() { <-ctx.Done(); ino.Close() }()
	buf := make([]byte, 64*1024)
	for {
		n, err := ino.Read(buf)
		if err != nil {
			if ctx.Err() != nil {
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
		var added []netip.Prefix
		e.mu.Lock()
		for _, name := range sortedKeys(e.lists) {
			l := e.lists[name]
			if l.cfg.Kind == cut.KindFile && changed[filepath.Base(l.cfg.Path)] {
				added = append(added, e.readFile(l)...)
			}
		}
		e.index = nil
		e.mu.Unlock()
		if len(added) > 0 {
			if err := e.cutListed(ctx, added); err != nil {
				e.log.WithError(err).Warn("cut: block-list file change")
			}
		}
	}
}

// cutNewFlow cuts a connection conntrack just created if an end of it is
// listed: a listed sender that opens a new flow is cut as it appears.
func (e *Engine) cutNewFlow(ctx context.Context, f status.Flow) {
	if f.Proto != "tcp" && f.Proto != "udp" {
		return
	}
	e.mu.Lock()
	ix := e.listIndex()
	e.mu.Unlock()
	p, trig, ok := flowListed(ix, f)
	if !ok {
		return
	}
	if _, err := e.cutFlows(ctx, []status.Flow{f}, "far end "+p.String()+" is on a watched block list (new connection)", trig); err != nil {
		e.log.WithError(err).Warn("cut: new connection of a listed address")
	}
}

// flowListed checks the four addresses of a flow against an index.
func flowListed(ix *prefixIndex, f status.Flow) (netip.Prefix, string, bool) {
	for _, s := range []string{f.Original.Src, f.Original.Dst, f.Reply.Src, f.Reply.Dst} {
		a, err := netip.ParseAddr(s)
		if err != nil {
			continue
		}
		if p, t, ok := ix.lookup(a); ok {
			return p, t, true
		}
	}
	return netip.Prefix{}, "", false
}

func setOf(ps []netip.Prefix) map[netip.Prefix]bool {
	m := make(map[netip.Prefix]bool, len(ps))
	for _, p := range ps {
		m[p] = true
	}
	return m
}

func keys(m map[netip.Prefix]bool) []netip.Prefix {
	out := make([]netip.Prefix, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	return out
}
