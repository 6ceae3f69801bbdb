package blocklist

import (
	"slices"
	"sort"
)

// point is where elements of an nftables interval set sit: the kernel
// keeps an interval as a start element and an end element (flagged
// NFT_SET_ELEM_INTERVAL_END) at the first address after it, and reports
// each in a notification of its own. An address is in the set when the
// nearest point at or below it is a start; where an interval ends and the
// next begins, one address holds both.
type point struct {
	at         u128
	start, end bool
}

// pointChange is one element added to or deleted from an interval set.
type pointChange struct {
	at      u128
	v6, end bool
	present bool   // false: deleted
	seq     uint32 // its place among the changes foldChanges folds (in the struct's padding)
}

// pointChanges turns the elements of one notification into changes. An
// element with an inclusive end key (pipapo sets) is a start and an end.
func pointChanges(els []rawElem, present bool) (out []pointChange, problems []string) {
	out = make([]pointChange, 0, len(els)) // more only for pipapo's ranges
	for _, el := range els {
		out, problems = appendPointChanges(out, problems, el, present)
	}
	return out, problems
}

// appendPointChanges appends the changes of one element to out, or why it
// has none to problems.
func appendPointChanges(out []pointChange, problems []string, el rawElem, present bool) ([]pointChange, []string) {
	a, v6, ok := keyNum(el.Key)
	if !ok {
		return out, append(problems, badKey(el.Key))
	}
	if len(el.KeyEnd) > 0 {
		b, bv6, ok := keyNum(el.KeyEnd)
		if !ok || bv6 != v6 || b.less(a) {
			return out, append(problems, "an interval with a malformed end key: skipped")
		}
		out = append(out, pointChange{at: a, v6: v6, present: present})
		if top := familyTop(v6); b != top {
			out = append(out, pointChange{at: b.inc(), v6: v6, end: true, present: present})
		}
		return out, problems
	}
	return append(out, pointChange{at: a, v6: v6, end: el.IntervalEnd, present: present}), problems
}

func familyTop(v6 bool) u128 {
	if v6 {
		return top6
	}
	return top4
}

// pointSet is the elements of one family of an interval set, sorted.
type pointSet []point

func (ps pointSet) search(at u128) int {
	lo, hi := 0, len(ps)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ps[m].at.less(at) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// set marks or clears one flag of the point at c.at and reports whether
// anything changed.
func (ps *pointSet) set(c pointChange) bool {
	s := *ps
	i := s.search(c.at)
	if i < len(s) && s[i].at == c.at {
		old, p := s[i], s[i]
		if c.end {
			p.end = c.present
		} else {
			p.start = c.present
		}
		if !p.start && !p.end {
			*ps = slices.Delete(s, i, i+1)
			return true
		}
		s[i] = p
		return p != old
	}
	if !c.present {
		return false
	}
	p := point{at: c.at, start: !c.end, end: c.end}
	*ps = slices.Insert(s, i, p)
	return true
}

// region is the range whose membership the point at at decides, and
// whether it is in the set: from at up to the next point.
func (ps pointSet) region(at u128, top u128) (span, bool) {
	i := ps.search(at)
	if i < len(ps) && ps[i].at == at {
		i++
	}
	hi := top
	if i < len(ps) {
		hi = ps[i].at.dec()
	}
	in := i > 0 && ps[i-1].start
	return span{at, hi}, in
}

// cover is the set of addresses the points describe.
func (ps pointSet) cover(top u128) spans {
	starts := 0
	for _, p := range ps {
		if p.start {
			starts++
		}
	}
	if starts == 0 {
		return nil
	}
	// At most a range per start: sized once, where growing it a quarter
	// at a time allocated it five times over.
	out := make(spans, 0, starts)
	open := false
	var lo u128
	for _, p := range ps {
		switch {
		case p.start && !open:
			lo, open = p.at, true
		case !p.start && open:
			out = append(out, span{lo, p.at.dec()})
			open = false
		}
	}
	if open {
		out = append(out, span{lo, top})
	}
	return out
}

// merged applies many changes at once (sorted by address): a bulk load
// costs one pass over the set instead of one move of it per element.
func (ps pointSet) merged(cs []pointChange) pointSet {
	out := make(pointSet, 0, len(ps)+len(cs))
	i := 0
	for k := 0; k < len(cs); {
		at := cs[k].at
		for i < len(ps) && ps[i].at.less(at) {
			out = append(out, ps[i])
			i++
		}
		p := point{at: at}
		if i < len(ps) && ps[i].at == at {
			p = ps[i]
			i++
		}
		for ; k < len(cs) && cs[k].at == at; k++ {
			if cs[k].end {
				p.end = cs[k].present
			} else {
				p.start = cs[k].present
			}
		}
		if p.start || p.end {
			out = append(out, p)
		}
	}
	return append(out, ps[i:]...)
}

// foldChanges keeps the last change of each flag of each point, sorted by
// family and address: the state a transaction leaves. It sorts cs in
// place: a map of the changes cost more memory than the changes
// themselves for a 100,000-element set.
func foldChanges(cs []pointChange) []pointChange {
	for i := range cs {
		cs[i].seq = uint32(i)
	}
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		switch {
		case a.v6 != b.v6:
			return b.v6
		case a.at != b.at:
			return a.at.less(b.at)
		case a.end != b.end:
			return b.end
		}
		return a.seq < b.seq
	})
	out := cs[:0]
	for i, c := range cs {
		if i+1 < len(cs) && cs[i+1].at == c.at && cs[i+1].v6 == c.v6 && cs[i+1].end == c.end {
			continue // a later change of the same flag wins
		}
		out = append(out, c)
	}
	return out
}
