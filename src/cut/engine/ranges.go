package engine

import (
	"fmt"
	"math/bits"
	"net/netip"
	"sort"
)

// elemPrefixes turns the elements of an address set into prefixes. Keys
// that are not 4 or 16 bytes (sets of other things) are reported and
// skipped. In interval sets a range [start, end) is spread over the
// smallest list of prefixes that covers it exactly.
func elemPrefixes(elems []rawElem) (out []netip.Prefix, problems []string) {
	type point struct {
		addr netip.Addr
		end  bool
	}
	var points []point
	hasEnds := false
	for _, el := range elems {
		a, ok := netip.AddrFromSlice(el.Key)
		if !ok {
			problems = append(problems, fmt.Sprintf("set key of %d bytes is not an IPv4 or IPv6 address: skipped", len(el.Key)))
			continue
		}
		if len(el.KeyEnd) > 0 {
			b, ok := netip.AddrFromSlice(el.KeyEnd)
			if !ok || b.BitLen() != a.BitLen() || b.Less(a) {
				problems = append(problems, fmt.Sprintf("interval %s - %x is malformed: skipped", a, el.KeyEnd))
				continue
			}
			out = append(out, rangePrefixes(a, b)...)
			continue
		}
		if el.IntervalEnd {
			hasEnds = true
		}
		points = append(points, point{a, el.IntervalEnd})
	}
	if !hasEnds {
		for _, p := range points {
			out = append(out, netip.PrefixFrom(p.addr, p.addr.BitLen()))
		}
		return out, problems
	}
	sort.SliceStable(points, func(i, j int) bool {
		if c := points[i].addr.Compare(points[j].addr); c != 0 {
			return c < 0
		}
		return points[i].end && !points[j].end // an end before a start at the same address
	})
	var start netip.Addr
	open := false
	for _, p := range points {
		switch {
		case !p.end && !open:
			start, open = p.addr, true
		case !p.end && open:
			// Two starts in a row: the first interval reaches up to the second.
			out = append(out, rangePrefixes(start, p.addr.Prev())...)
			start = p.addr
		case p.end && open:
			if last := p.addr.Prev(); last.IsValid() && !last.Less(start) {
				out = append(out, rangePrefixes(start, last)...)
			}
			open = false
		}
	}
	if open {
		// No end element: the interval runs to the top of the address space.
		out = append(out, rangePrefixes(start, lastAddr(start))...)
	}
	return out, problems
}

func lastAddr(a netip.Addr) netip.Addr {
	if a.Is4() {
		return netip.AddrFrom4([4]byte{255, 255, 255, 255})
	}
	var b [16]byte
	for i := range b {
		b[i] = 0xff
	}
	return netip.AddrFrom16(b)
}

// rangePrefixes covers [lo, hi] (inclusive, same family) with prefixes.
func rangePrefixes(lo, hi netip.Addr) []netip.Prefix {
	if lo.BitLen() != hi.BitLen() || hi.Less(lo) {
		return nil
	}
	width := lo.BitLen()
	var out []netip.Prefix
	for {
		// The largest block starting at lo that is aligned and ends by hi.
		host := trailingZeros(lo, width)
		for host > 0 {
			if last := blockLast(lo, width, host); !hi.Less(last) {
				break
			}
			host--
		}
		out = append(out, netip.PrefixFrom(lo, width-host))
		last := blockLast(lo, width, host)
		if last == hi {
			return out
		}
		lo = last.Next()
	}
}

// trailingZeros counts the zero bits at the end of a.
func trailingZeros(a netip.Addr, width int) int {
	b := a.AsSlice()
	n := 0
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == 0 {
			n += 8
			continue
		}
		n += bits.TrailingZeros8(b[i])
		break
	}
	if n > width {
		n = width
	}
	return n
}

// blockLast is the last address of the block of 2^host addresses at a.
func blockLast(a netip.Addr, width, host int) netip.Addr {
	b := a.AsSlice()
	for i := 0; i < host; i++ {
		b[len(b)-1-i/8] |= 1 << (i % 8)
	}
	out, _ := netip.AddrFromSlice(b)
	return out
}
