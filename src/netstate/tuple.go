package netstate

import (
	"fmt"
	"net/netip"
	"strings"
)

// Tuple is one direction of a connection as it arrives on a device.
type Tuple struct {
	Proto   string `json:"proto"` // "tcp" or "udp"
	Src     string `json:"src"`
	Dst     string `json:"dst"`
	SrcPort uint16 `json:"sport"`
	DstPort uint16 `json:"dport"`
}

// Reverse is the tuple of the other direction, as seen on the same path.
func (t Tuple) Reverse() Tuple {
	return Tuple{Proto: t.Proto, Src: t.Dst, Dst: t.Src, SrcPort: t.DstPort, DstPort: t.SrcPort}
}

// String formats a tuple like conntrack -L does.
func (t Tuple) String() string {
	return fmt.Sprintf("%s src=%s dst=%s sport=%d dport=%d", t.Proto, t.Src, t.Dst, t.SrcPort, t.DstPort)
}

// Equal reports whether two tuples name the same direction of a
// connection (addresses compared as addresses, so "::ffff:1.2.3.4" is 1.2.3.4).
func (t Tuple) Equal(o Tuple) bool {
	return strings.EqualFold(t.Proto, o.Proto) && t.SrcPort == o.SrcPort && t.DstPort == o.DstPort &&
		sameAddr(t.Src, o.Src) && sameAddr(t.Dst, o.Dst)
}

func sameAddr(a, b string) bool {
	x, err1 := netip.ParseAddr(a)
	y, err2 := netip.ParseAddr(b)
	return err1 == nil && err2 == nil && x.Unmap() == y.Unmap()
}

// Ends are the four addresses of a connection: original source and
// destination, reply source and destination. One that does not parse is
// the zero Addr.
func Ends(original, reply Tuple) [4]netip.Addr {
	var ends [4]netip.Addr
	for i, s := range [4]string{original.Src, original.Dst, reply.Src, reply.Dst} {
		ends[i], _ = netip.ParseAddr(s)
	}
	return ends
}

// FirstEndIn is the index in ends of the first address that lies in p, or
// -1. With NAT the far end of a connection shows in one direction only, so
// a connection "has an address" when any of its four ends does. Addresses
// are compared unmapped: ::ffff:10.0.0.1 lies in 10.0.0.0/8.
func FirstEndIn(ends *[4]netip.Addr, p netip.Prefix) int {
	for i, a := range ends {
		if a.IsValid() && p.Contains(a.Unmap()) {
			return i
		}
	}
	return -1
}

// HasAddressIn reports whether an end of the connection of original and
// reply lies in p (see FirstEndIn).
func HasAddressIn(original, reply Tuple, p netip.Prefix) bool {
	ends := Ends(original, reply)
	return FirstEndIn(&ends, p) >= 0
}
