package cut

import (
	"net/netip"
	"strings"
)

// Equal reports whether two tuples name the same direction of a
// connection (addresses compared as addresses, so "::ffff:1.2.3.4" is 1.2.3.4).
func (t Tuple) Equal(o Tuple) bool {
	return strings.EqualFold(t.Proto, o.Proto) && t.SrcPort == o.SrcPort && t.DstPort == o.DstPort &&
		sameAddr(t.Src, o.Src) && sameAddr(t.Dst, o.Dst)
}

// HasAddressIn reports whether either end of t lies in p.
func (t Tuple) HasAddressIn(p netip.Prefix) bool {
	for _, s := range []string{t.Src, t.Dst} {
		if a, err := netip.ParseAddr(s); err == nil && p.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

// Names reports whether t is either direction of the cut connection, as
// seen from either side.
func (c Cut) Names(t Tuple) bool {
	r := t.Reverse()
	return c.Original.Equal(t) || c.Reply.Equal(t) || c.Original.Equal(r) || c.Reply.Equal(r)
}

// HasAddressIn reports whether an end of the cut connection, before or
// after NAT, lies in p.
func (c Cut) HasAddressIn(p netip.Prefix) bool {
	return c.Original.HasAddressIn(p) || c.Reply.HasAddressIn(p)
}

func sameAddr(a, b string) bool {
	x, err1 := netip.ParseAddr(a)
	y, err2 := netip.ParseAddr(b)
	return err1 == nil && err2 == nil && x.Unmap() == y.Unmap()
}
