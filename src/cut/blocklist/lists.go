package blocklist

import (
	"bytes"
	"fmt"
	"net/netip"
	"sort"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

// listState is what one watched block list holds now.
type listState struct {
	cfg      cut.BlocklistConfig
	source   string
	problems []string
	cover    Set  // the addresses it lists
	entries  int  // lines, addresses or set elements, as its source counts them
	counted  bool // entries is up to date (nftables sets count when reported)
	// minBits are cut_min_prefix4 and cut_min_prefix6: a range wider than
	// that is listed but not cut, and wide says so.
	minBits [2]int

	// nftables sets only: the elements of an interval set, and the changes
	// of the transaction under way, applied when it commits (so a set
	// deleted and re-created in one transaction never looks empty).
	interval bool
	pts      [2]pointSet // IPv4, IPv6
	pending  []pointChange
	reset    bool // the set (or its table) went in this transaction

	exp expiry // when a set with timeouts is to be read again

	// Presets: a preset's own list holds nothing and reports only while
	// none of its sets exists or it has problems (preset); the list of
	// each set it follows names it (parent) and goes with the set (gone:
	// deleted in the transaction under way, and not made again so far).
	preset *preset
	parent *preset
	gone   bool
}

func newListState(cfg cut.BlocklistConfig) *listState {
	l := &listState{cfg: cfg, minBits: [2]int{cut.DefaultMinPrefix4, cut.DefaultMinPrefix6}}
	switch {
	case cfg.Set != "":
		l.source = cfg.Family + " " + cfg.Table + " " + cfg.Set
	case cfg.Kind == cut.KindFile:
		l.source = cfg.Path
	default:
		l.source = "/etc/config/fastpath"
	}
	if p, ok := presetOf(cfg); ok && cfg.Set == "" {
		l.preset, l.source = p, p.source()
	}
	return l
}

// trigger names the list in a cut's report.
func (l *listState) trigger() string { return "blocklist:" + l.cfg.Name }

// delta is what a change did to a list: the addresses it listed (some
// may have been listed before) and whether it dropped any.
type delta struct {
	added   Set
	removed bool
}

func (d *delta) join(o delta) {
	d.added = unionSet(d.added, o.added)
	d.removed = d.removed || o.removed
}

func diffSets(old, now Set) delta {
	gone := subtractSet(old, now)
	return delta{added: subtractSet(now, old), removed: !gone.empty()}
}

// replace sets the list's addresses; entries is how many its source has.
func (l *listState) replace(now Set, entries int) delta {
	d := l.diff(l.cover, now)
	l.cover, l.entries, l.counted = now, entries, true
	return d
}

// tooWide reports whether a range of the list is wider than it may cut.
func (l *listState) tooWide(n span, v6 bool) bool {
	if v6 {
		return n.wider(l.minBits[1], 128)
	}
	return n.wider(l.minBits[0], 32)
}

// wide lists the ranges too wide to cut, up to MaxListProblems.
func (l *listState) wide() (wide []string) {
	for f, ss := range [2]spans{l.cover.v4, l.cover.v6} {
		v6 := f == 1
		for _, n := range ss {
			if !l.tooWide(n, v6) {
				continue
			}
			if len(wide) == cut.MaxListProblems {
				return append(wide, "blocklist "+l.cfg.Name+": more ranges too wide to cut")
			}
			bits, opt := l.minBits[0], "cut_min_prefix4"
			if v6 {
				bits, opt = l.minBits[1], "cut_min_prefix6"
			}
			wide = append(wide, fmt.Sprintf("blocklist %s: %s is wider than /%d (fastpath.main.%s): connections in it are not cut, so a list cannot cut the router off; narrow it or lower %s", l.cfg.Name, spanText(n, v6), bits, opt, opt))
		}
	}
	return wide
}

// replacePrefixes is replace for a list of prefixes.
func (l *listState) replacePrefixes(ps []netip.Prefix) delta {
	return l.replace(setOfPrefixes(ps), len(ps))
}

// load sets an nftables set's content from a full read of its elements.
func (l *listState) load(els []rawElem, interval bool) (delta, []string) {
	cs, problems := pointChanges(els, true)
	return l.loadChanges(cs, interval), problems
}

// loadChanges is load of the changes a full read's elements make.
func (l *listState) loadChanges(cs []pointChange, interval bool) delta {
	l.interval, l.pending, l.reset = interval, nil, false
	l.pts = [2]pointSet{}
	old := l.cover
	l.cover = Set{}
	l.apply(foldChanges(cs), true)
	return l.diff(old, l.cover)
}

// queue records elements a notification added or deleted.
func (l *listState) queue(els []rawElem, present bool) (problems []string) {
	for _, el := range els {
		l.pending, problems = appendPointChanges(l.pending, problems, el, present)
	}
	return problems
}

// dropAll records that the set went (DELSET, DELTABLE) or came anew
// (NEWSET): it starts empty, whatever the transaction adds after.
func (l *listState) dropAll(interval bool) {
	// The commit builds the points anew: let the old ones go now, not
	// beside the new set's (its count is kept for reports until then).
	l.countNow()
	// Room for a set as large again (banIP's reload creates it anew in
	// the same transaction), where growing it a quarter at a time
	// allocated it five times over.
	if size := l.size(); size > cap(l.pending) {
		l.pending = make([]pointChange, 0, size)
	}
	l.reset, l.pending, l.interval, l.pts = true, l.pending[:0], interval, [2]pointSet{}
}

// size is how many changes would load the list as it is: its points, or
// the ranges of a set without intervals.
func (l *listState) size() int {
	if l.interval {
		return len(l.pts[0]) + len(l.pts[1])
	}
	return l.cover.len()
}

// commit applies the transaction's changes.
func (l *listState) commit() delta {
	cs := foldChanges(l.pending)
	l.pending = nil
	if l.reset {
		l.reset = false
		old := l.cover
		l.pts, l.cover = [2]pointSet{}, Set{}
		l.apply(cs, true)
		return l.diff(old, l.cover)
	}
	return l.apply(cs, false)
}

// apply applies sorted changes. A large batch (a bulk load) rebuilds the
// family it touches in one pass; a few changes move only what they touch.
func (l *listState) apply(cs []pointChange, bulk bool) (d delta) {
	split := sort.Search(len(cs), func(i int) bool { return cs[i].v6 })
	for f, fcs := range [2][]pointChange{cs[:split], cs[split:]} {
		if len(fcs) == 0 {
			continue
		}
		v6 := f == 1
		cov, top := l.cover.fam(v6)
		// A change moves the sorted slices behind it (O(n) each); a pass
		// over them all costs a few of those: past a handful, rebuild.
		big := bulk || len(fcs) > bulkAfter
		if l.interval {
			ps := &l.pts[f]
			if big {
				old := *cov
				*ps = ps.merged(fcs)
				*cov = ps.cover(top)
				d.join(l.familyDelta(old, *cov, v6))
				continue
			}
			// Every point first: what an address's membership is depends
			// on the points of the transaction together (a start and its
			// end come as two notifications).
			touched := fcs[:0:0]
			for _, c := range fcs {
				if ps.set(c) {
					touched = append(touched, c)
				}
			}
			for _, c := range touched {
				r, in := ps.region(c.at, top)
				d.mark(cov, r, in, v6, top)
			}
			continue
		}
		if big {
			var add, del []span
			for _, c := range fcs {
				if c.present {
					add = append(add, span{c.at, c.at})
				} else {
					del = append(del, span{c.at, c.at})
				}
			}
			old := *cov
			*cov = subtract(union(old, normalized(add, top), top), normalized(del, top))
			d.join(l.familyDelta(old, *cov, v6))
			continue
		}
		for _, c := range fcs {
			d.mark(cov, span{c.at, c.at}, c.present, v6, top)
		}
	}
	l.counted = false // counted when reported: a commit costs only what it moves
	return d
}

// bulkAfter is how many changes of a transaction are moved one by one.
const bulkAfter = 8

// mark puts r in the list (in) or takes it out, and records it in d.
func (d *delta) mark(cov *spans, r span, in, v6 bool, top u128) {
	if in {
		*cov = cov.add(r, top)
		d.added.addSpan(r, v6)
		return
	}
	if cov.overlaps(r) {
		*cov = cov.remove(r)
		d.removed = true
	}
}

func (l *listState) familyDelta(old, now spans, v6 bool) delta {
	var o, n Set
	*o.fam0(v6), *n.fam0(v6) = old, now
	return l.diff(o, n)
}

// diff is what a change from old to now did to what the list cuts: a
// range too wide to cut is as if not listed, so narrowing it lists anew.
func (l *listState) diff(old, now Set) delta {
	return diffSets(l.enforced(old), l.enforced(now))
}

// enforced is s without the ranges too wide to cut.
func (l *listState) enforced(s Set) Set {
	out := Set{}
	for f, ss := range [2]spans{s.v4, s.v6} {
		keep := ss
		for i, n := range ss {
			if l.tooWide(n, f == 1) {
				keep = append(ss[:i:i], nil...)
				for _, m := range ss[i:] {
					if !l.tooWide(m, f == 1) {
						keep = append(keep, m)
					}
				}
				break
			}
		}
		*out.fam0(f == 1) = keep
	}
	return out
}

func (s *Set) fam0(v6 bool) *spans { p, _ := s.fam(v6); return p }

// count is the number of elements of an nftables set: intervals of an
// interval set, addresses of a plain one.
func (l *listState) count() int {
	n := 0
	if l.interval {
		for _, ps := range l.pts {
			for _, p := range ps {
				if p.start {
					n++
				}
			}
		}
		return n
	}
	for _, ss := range []spans{l.cover.v4, l.cover.v6} {
		for _, s := range ss {
			if s.hi.hi != s.lo.hi || s.hi.lo-s.lo.lo >= 1<<30 {
				return 1 << 30 // not a set of single addresses
			}
			n += int(s.hi.lo-s.lo.lo) + 1
		}
	}
	return n
}

// count returns the entries, counting an nftables set's now if a change
// left them uncounted.
func (l *listState) countNow() int {
	if !l.counted {
		l.entries, l.counted = l.count(), true
	}
	return l.entries
}

func (l *listState) report() cut.Blocklist {
	kind := l.cfg.Kind
	if kind == cut.KindList {
		kind = "uci"
	}
	errs, total := cut.SplitProblems(append(append([]string(nil), l.problems...), l.wide()...))
	b := cut.Blocklist{Name: l.cfg.Name, Kind: kind, Source: l.source, Entries: l.countNow(), Errors: errs}
	if total > len(errs) {
		b.ErrorsTotal = total
	}
	return b
}

// badKey describes a set key that is not an address.
func badKey(k []byte) string {
	return fmt.Sprintf("set key of %d bytes is not an IPv4 or IPv6 address: skipped", len(k))
}

// keyNum reads a set key as an address.
func keyNum(k []byte) (u128, bool, bool) {
	a, ok := netip.AddrFromSlice(k)
	if !ok {
		return u128{}, false, false
	}
	n, v6 := addrNum(a)
	return n, v6, true
}

// boundElems keeps the elements of at most MaxListEntries entries of a
// set, the lowest addresses first, and says so when it drops any.
func boundElems(els []rawElem, interval bool, list string) ([]rawElem, string) {
	limit := cut.MaxListEntries
	if interval {
		limit *= 2 // a start and an end each
	}
	if len(els) <= limit {
		return els, ""
	}
	n := len(els)
	// sort.Slice, not slices.SortFunc: one sort's code for every type
	// keeps the binary small.
	sort.Slice(els, func(i, j int) bool {
		a, b := els[i], els[j]
		if len(a.Key) != len(b.Key) {
			return len(a.Key) < len(b.Key)
		}
		if c := bytes.Compare(a.Key, b.Key); c != 0 {
			return c < 0
		}
		return a.IntervalEnd && !b.IntervalEnd // an end before a start at one address
	})
	els = els[:limit]
	if last := els[len(els)-1]; interval && !last.IntervalEnd && len(last.KeyEnd) == 0 {
		els = els[:len(els)-1] // a start whose end was dropped would run to the top
	}
	return els, fmt.Sprintf("blocklist %s: the set has %d elements, more than %d entries (MaxListEntries): those of the lowest addresses are followed; split the set", list, n, cut.MaxListEntries)
}
