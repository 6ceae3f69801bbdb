package blocklist

import (
	"net/netip"
	"sync"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

// Lists is what the watched block lists hold now: the engine asks it
// whether a flow is listed, and a report reads it. Its methods are safe
// for concurrent use; a nil *Lists lists nothing. A watch changes it
// before it tells anyone of the change (Watch.Run), so an answer read
// after a call of removed already lacks what the lists dropped.
type Lists struct {
	mu     sync.RWMutex
	byName map[string]*listState
	index  *listIndex // of byName, rebuilt or extended with them
	// regroup: a list came or went (a preset's set) since the index was
	// built; the next change rebuilds it.
	regroup bool
}

func newLists(byName map[string]*listState) *Lists {
	return &Lists{byName: byName, index: buildIndex(byName)}
}

// Listed reports whether an address of a flow is listed, and by which
// list; with only, an address counts only if it is in only too.
func (ls *Lists) Listed(fa Addrs, only *Set) (Listing, bool) {
	if ls == nil {
		return Listing{}, false
	}
	ls.mu.RLock()
	defer ls.mu.RUnlock()
	ix := ls.index
	for _, a := range fa.a[:fa.n] {
		if !ix.has(a) || only != nil && !only.has(a) {
			continue
		}
		if l, ok := ix.lookup(a); ok {
			return l, true
		}
	}
	return Listing{}, false
}

// Report describes every list, sorted by name.
func (ls *Lists) Report() []cut.Blocklist {
	if ls == nil {
		return nil
	}
	ls.mu.Lock() // a report counts a set's entries when a change left them uncounted
	defer ls.mu.Unlock()
	var out []cut.Blocklist
	for _, name := range sortedKeys(ls.byName) {
		l := ls.byName[name]
		if l.preset == nil {
			out = append(out, l.report())
			continue
		}
		// A preset reports through its sets; itself only when it has
		// none, or sets it could not follow.
		children := childCount(ls.byName, l.preset)
		if children > 0 && len(l.problems) == 0 {
			continue
		}
		r := l.report()
		if children == 0 {
			r.Errors = append([]string{l.preset.waiting()}, r.Errors...)
			if r.ErrorsTotal > 0 {
				r.ErrorsTotal++
			}
		}
		out = append(out, r)
	}
	return out
}

// changed brings the index up to date after d. The caller holds ls.mu.
func (ls *Lists) changed(d delta) {
	switch {
	case d.removed || ls.regroup:
		ls.index, ls.regroup = buildIndex(ls.byName), false
	case !d.added.empty():
		ls.index.extend(d.added)
	}
}

// drop takes a list out. The caller holds ls.mu and calls changed.
func (ls *Lists) drop(name string) {
	delete(ls.byName, name)
	ls.regroup = true
}

// Listing is why an address is listed: the list and its range.
type Listing struct {
	Trigger string     // the list, as a cut's trigger names it
	what    string     // the listed range, as a prefix where it is one
	addr    netip.Addr // the flow's address in it
}

// Reason is a cut's reason for the listed address; suffix follows it.
func (l Listing) Reason(suffix string) string {
	return "far end " + l.addr.String() + " is on a watched block list (" + l.what + ")" + suffix
}

// listIndex answers "is this address on a list, and on which": one binary
// search in the union of every list; the list is looked for only on a hit.
type listIndex struct {
	all   Set
	lists []*listState // sorted by name: the first that lists an address names it
}

func buildIndex(lists map[string]*listState) *listIndex {
	ix := &listIndex{}
	var n4, n6 int
	for _, name := range sortedKeys(lists) {
		l := lists[name]
		ix.lists = append(ix.lists, l)
		n4, n6 = n4+len(l.cover.v4), n6+len(l.cover.v6)
	}
	// Every list's ranges in one slice, sorted and merged once: a union
	// list by list copied the largest list once per list after it.
	v4, v6 := make([]span, 0, n4), make([]span, 0, n6)
	for _, l := range ix.lists {
		v4, v6 = append(v4, l.cover.v4...), append(v6, l.cover.v6...)
	}
	ix.all = Set{normalized(v4, top4), normalized(v6, top6)}
	return ix
}

// extend adds what a change listed, without a rebuild.
func (ix *listIndex) extend(added Set) {
	if added.len() > bulkAfter {
		ix.all = unionSet(ix.all, added)
		return
	}
	for _, n := range added.v4 {
		ix.all.addSpan(n, false)
	}
	for _, n := range added.v6 {
		ix.all.addSpan(n, true)
	}
}

// lookup returns the list that holds a.
func (ix *listIndex) lookup(a netip.Addr) (Listing, bool) {
	if !ix.all.has(a) {
		return Listing{}, false
	}
	n, v6 := addrNum(a)
	for _, l := range ix.lists {
		ss, _ := l.cover.fam(v6)
		if s, ok := ss.find(n); ok && !l.tooWide(s, v6) {
			return Listing{Trigger: l.trigger(), what: spanText(s, v6), addr: a}, true
		}
	}
	return Listing{}, false
}

func (ix *listIndex) has(a netip.Addr) bool { return ix.all.has(a) }
