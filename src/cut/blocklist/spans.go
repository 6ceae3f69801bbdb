package blocklist

import (
	"encoding/binary"
	"net/netip"
	"slices"
	"sort"
)

// u128 is an address as a number: an IPv4 address in lo, an IPv6 address
// in hi:lo. Comparing two is two integer compares, where netip.Addr's
// Compare also looks at the family and the zone.
type u128 struct{ hi, lo uint64 }

func (a u128) less(b u128) bool { return a.hi < b.hi || a.hi == b.hi && a.lo < b.lo }

func (a u128) inc() u128 {
	if a.lo++; a.lo == 0 {
		a.hi++
	}
	return a
}

func (a u128) dec() u128 {
	if a.lo == 0 {
		a.hi--
	}
	a.lo--
	return a
}

func maxU(a, b u128) u128 {
	if a.less(b) {
		return b
	}
	return a
}

func minU(a, b u128) u128 {
	if b.less(a) {
		return b
	}
	return a
}

func (a u128) sub(b u128) u128 {
	lo := a.lo - b.lo
	borrow := uint64(0)
	if a.lo < b.lo {
		borrow = 1
	}
	return u128{a.hi - b.hi - borrow, lo}
}

// wider reports whether n holds more addresses than a prefix of length
// bits (of a family of width bits) does.
func (n span) wider(bits, width int) bool {
	host := width - bits
	if host >= 128 {
		return false
	}
	// n holds hi-lo+1 addresses; the prefix 2^host: wider when hi-lo >= 2^host.
	var limit u128
	if host >= 64 {
		limit.hi = 1 << (host - 64)
	} else {
		limit.lo = 1 << host
	}
	return !n.hi.sub(n.lo).less(limit)
}

// top4 and top6 are the last address of each family.
var (
	top4 = u128{0, 0xffffffff}
	top6 = u128{^uint64(0), ^uint64(0)}
)

// addrNum turns an address into its number and family (IPv4-mapped IPv6
// addresses count as IPv4).
func addrNum(a netip.Addr) (u128, bool) {
	a = a.Unmap()
	if a.Is4() {
		b := a.As4()
		return u128{0, uint64(binary.BigEndian.Uint32(b[:]))}, false
	}
	b := a.As16()
	return u128{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}, true
}

func numAddr(n u128, v6 bool) netip.Addr {
	if !v6 {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(n.lo))
		return netip.AddrFrom4(b)
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], n.hi)
	binary.BigEndian.PutUint64(b[8:], n.lo)
	return netip.AddrFrom16(b)
}

// span is the inclusive range [lo, hi] of one family.
type span struct{ lo, hi u128 }

// prefixSpan is the range a prefix covers.
func prefixSpan(p netip.Prefix) (span, bool) {
	p = p.Masked()
	lo, v6 := addrNum(p.Addr())
	host := 32 - p.Bits()
	if v6 {
		host = 128 - p.Bits()
	}
	hi := lo
	switch {
	case host >= 128:
		hi = top6
	case host >= 64:
		hi.lo = ^uint64(0)
		hi.hi |= ^uint64(0) >> (128 - host)
	case host > 0:
		hi.lo |= ^uint64(0) >> (64 - host)
	}
	return span{lo, hi}, v6
}

// spans is a sorted list of disjoint ranges, no two adjacent (they are
// merged): the addresses of a block list as the kernel would match them.
type spans []span

// search returns the index of the first span whose hi is at least x.
func (s spans) search(x u128) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m].hi.less(x) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// find returns the span that holds x.
func (s spans) find(x u128) (span, bool) {
	i := s.search(x)
	if i < len(s) && !x.less(s[i].lo) {
		return s[i], true
	}
	return span{}, false
}

func (s spans) contains(x u128) bool { _, ok := s.find(x); return ok }

// overlaps reports whether some address of n is in s.
func (s spans) overlaps(n span) bool {
	i := s.search(n.lo)
	return i < len(s) && !n.hi.less(s[i].lo)
}

// add puts n in s, merging what it overlaps or touches.
func (s spans) add(n span, top u128) spans {
	from := n.lo
	if from != (u128{}) {
		from = from.dec() // a span ending just below n touches it
	}
	i := s.search(from)
	j := i
	for j < len(s) && (n.hi == top || !n.hi.inc().less(s[j].lo)) {
		j++
	}
	if i < j {
		n.lo, n.hi = minU(n.lo, s[i].lo), maxU(n.hi, s[j-1].hi)
	}
	return slices.Replace(s, i, j, n)
}

// remove takes n out of s.
func (s spans) remove(n span) spans {
	i := s.search(n.lo)
	j := i
	for j < len(s) && !n.hi.less(s[j].lo) {
		j++
	}
	if i == j {
		return s
	}
	var keep [2]span
	k := 0
	if s[i].lo.less(n.lo) {
		keep[k] = span{s[i].lo, n.lo.dec()}
		k++
	}
	if n.hi.less(s[j-1].hi) {
		keep[k] = span{n.hi.inc(), s[j-1].hi}
		k++
	}
	return slices.Replace(s, i, j, keep[:k]...)
}

// normalized sorts and merges ranges into spans.
func normalized(in []span, top u128) spans {
	sort.Slice(in, func(i, j int) bool { return in[i].lo.less(in[j].lo) })
	return merged(in, top)
}

// merged merges ranges sorted by lo that overlap or touch, in place.
func merged(in []span, top u128) spans {
	out := spans(in[:0])
	for _, n := range in {
		if k := len(out); k > 0 && (out[k-1].hi == top || !out[k-1].hi.inc().less(n.lo)) {
			out[k-1].hi = maxU(out[k-1].hi, n.hi)
			continue
		}
		out = append(out, n)
	}
	return out
}

// union merges two span lists into a new one.
func union(a, b spans, top u128) spans {
	all := make([]span, 0, len(a)+len(b))
	// Both are sorted: a merge by lo, then merged's pass joins.
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j == len(b) || i < len(a) && a[i].lo.less(b[j].lo) {
			all = append(all, a[i])
			i++
		} else {
			all = append(all, b[j])
			j++
		}
	}
	return merged(all, top)
}

// subtract returns what of a is not in b.
func subtract(a, b spans) spans {
	if len(b) == 0 && len(a) > 0 {
		return slices.Clone(a) // a load's additions: all of a, allocated once
	}
	var out spans
	j := 0
	for _, n := range a {
		for j < len(b) && b[j].hi.less(n.lo) {
			j++
		}
		cur, covered := n, false
		for k := j; k < len(b) && !cur.hi.less(b[k].lo); k++ {
			if cur.lo.less(b[k].lo) {
				out = append(out, span{cur.lo, b[k].lo.dec()})
			}
			if !b[k].hi.less(cur.hi) {
				covered = true // the rest of n is in b
				break
			}
			cur.lo = b[k].hi.inc()
		}
		if !covered {
			out = append(out, cur)
		}
	}
	return out
}

// Set is a set of addresses of both families.
type Set struct{ v4, v6 spans }

func (s *Set) fam(v6 bool) (*spans, u128) {
	if v6 {
		return &s.v6, top6
	}
	return &s.v4, top4
}

func (s *Set) addSpan(n span, v6 bool) {
	p, top := s.fam(v6)
	*p = p.add(n, top)
}

func (s *Set) removeSpan(n span, v6 bool) {
	p, _ := s.fam(v6)
	*p = p.remove(n)
}

func (s *Set) addPrefix(p netip.Prefix) {
	n, v6 := prefixSpan(p)
	s.addSpan(n, v6)
}

// has reports whether a is in the set.
func (s *Set) has(a netip.Addr) bool {
	n, v6 := addrNum(a)
	if v6 {
		return s.v6.contains(n)
	}
	return s.v4.contains(n)
}

func (s *Set) empty() bool { return len(s.v4) == 0 && len(s.v6) == 0 }

func (s *Set) len() int { return len(s.v4) + len(s.v6) }

// setOfPrefixes builds a set from prefixes.
func setOfPrefixes(ps []netip.Prefix) Set {
	var v4, v6 []span
	for _, p := range ps {
		n, is6 := prefixSpan(p)
		if is6 {
			v6 = append(v6, n)
		} else {
			v4 = append(v4, n)
		}
	}
	return Set{normalized(v4, top4), normalized(v6, top6)}
}

func unionSet(a, b Set) Set {
	return Set{union(a.v4, b.v4, top4), union(a.v6, b.v6, top6)}
}

func subtractSet(a, b Set) Set {
	return Set{subtract(a.v4, b.v4), subtract(a.v6, b.v6)}
}

// spanText names a span as a prefix when it is one, else as lo-hi.
func spanText(n span, v6 bool) string {
	lo, hi := numAddr(n.lo, v6), numAddr(n.hi, v6)
	for bits := 0; bits <= lo.BitLen(); bits++ {
		if p := netip.PrefixFrom(lo, bits); p.Masked().Addr() == lo {
			if s, _ := prefixSpan(p); s == n {
				return p.String()
			}
		}
	}
	return lo.String() + "-" + hi.String()
}
