package engine

import (
	"net/netip"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

// listState is what one watched block list holds now.
type listState struct {
	cfg      cut.BlocklistConfig
	source   string
	prefixes map[netip.Prefix]bool
	problems []string
}

func newListState(cfg cut.BlocklistConfig) *listState {
	l := &listState{cfg: cfg, prefixes: map[netip.Prefix]bool{}}
	switch cfg.Kind {
	case cut.KindNftSet:
		l.source = cfg.Family + " " + cfg.Table + " " + cfg.Set
	case cut.KindFile:
		l.source = cfg.Path
	default:
		l.source = "/etc/config/fastpath"
	}
	return l
}

// trigger names the list in a cut's report.
func (l *listState) trigger() string { return "blocklist:" + l.cfg.Name }

// replace sets the list's content and returns the prefixes that are new.
func (l *listState) replace(ps []netip.Prefix) (added []netip.Prefix) {
	next := make(map[netip.Prefix]bool, len(ps))
	for _, p := range ps {
		if !next[p] && !l.prefixes[p] {
			added = append(added, p)
		}
		next[p] = true
	}
	l.prefixes = next
	return added
}

// add puts prefixes in the list and returns those that are new.
func (l *listState) add(ps []netip.Prefix) (added []netip.Prefix) {
	for _, p := range ps {
		if !l.prefixes[p] {
			l.prefixes[p] = true
			added = append(added, p)
		}
	}
	return added
}

func (l *listState) remove(ps []netip.Prefix) {
	for _, p := range ps {
		delete(l.prefixes, p)
	}
}

func (l *listState) report() cut.Blocklist {
	kind := l.cfg.Kind
	if kind == cut.KindList {
		kind = "uci"
	}
	return cut.Blocklist{Name: l.cfg.Name, Kind: kind, Source: l.source, Entries: len(l.prefixes), Errors: append([]string(nil), l.problems...)}
}

// prefixIndex answers "is this address on a list, and which" in one map
// lookup per distinct prefix length.
type prefixIndex struct {
	lengths []int
	byLen   map[int]map[netip.Prefix]string
}

func buildIndex(lists map[string]*listState) *prefixIndex {
	ix := &prefixIndex{byLen: map[int]map[netip.Prefix]string{}}
	for _, name := range sortedKeys(lists) {
		l := lists[name]
		for p := range l.prefixes {
			m := ix.byLen[p.Bits()]
			if m == nil {
				m = map[netip.Prefix]string{}
				ix.byLen[p.Bits()] = m
				ix.lengths = append(ix.lengths, p.Bits())
			}
			if _, ok := m[p]; !ok {
				m[p] = l.trigger()
			}
		}
	}
	return ix
}

// lookup returns the listed prefix containing a and its list's trigger.
func (ix *prefixIndex) lookup(a netip.Addr) (netip.Prefix, string, bool) {
	a = a.Unmap()
	for _, n := range ix.lengths {
		if n > a.BitLen() {
			continue
		}
		p, err := a.Prefix(n)
		if err != nil {
			continue
		}
		if t, ok := ix.byLen[n][p]; ok {
			return p, t, true
		}
	}
	return netip.Prefix{}, "", false
}
