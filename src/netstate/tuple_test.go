package netstate

import (
	"net/netip"
	"testing"
)

func TestHasAddressInAnyOfTheFourEnds(t *testing.T) {
	// A masqueraded connection: the client 10.0.1.2 shows only in the
	// original direction, the router's WAN address 10.0.2.1 only in the reply.
	orig := Tuple{Proto: "udp", Src: "10.0.1.2", Dst: "10.0.2.2", SrcPort: 5000, DstPort: 5201}
	reply := Tuple{Proto: "udp", Src: "10.0.2.2", Dst: "10.0.2.1", SrcPort: 5201, DstPort: 61000}
	f := Flow{Original: orig, Reply: reply}
	for _, tc := range []struct {
		prefix string
		want   int // FirstEndIn
	}{
		{"10.0.1.2/32", 0},
		{"10.0.2.2/32", 1},
		{"10.0.2.1/32", 3},
		{"10.0.2.0/24", 1},
		{"10.0.0.0/8", 0},
		{"192.0.2.0/24", -1},
		{"::ffff:10.0.2.1/128", -1}, // a mapped prefix holds no unmapped address
	} {
		p := netip.MustParsePrefix(tc.prefix)
		ends := Ends(orig, reply)
		if got := FirstEndIn(&ends, p); got != tc.want {
			t.Errorf("FirstEndIn(%s) = %d, want %d", p, got, tc.want)
		}
		if got := f.HasAddressIn(p); got != (tc.want >= 0) {
			t.Errorf("HasAddressIn(%s) = %v, want %v", p, got, tc.want >= 0)
		}
	}
	// A mapped address in a tuple is compared as the IPv4 address it is.
	mapped := Tuple{Proto: "tcp", Src: "::ffff:192.0.2.7", Dst: "bad", SrcPort: 1, DstPort: 2}
	if !HasAddressIn(mapped, Tuple{}, netip.MustParsePrefix("192.0.2.0/24")) {
		t.Error("::ffff:192.0.2.7 not found in 192.0.2.0/24")
	}
	if HasAddressIn(Tuple{Src: "bad"}, Tuple{}, netip.MustParsePrefix("0.0.0.0/0")) {
		t.Error("an unparsable address lies in 0.0.0.0/0")
	}
}

func TestTupleEqualAndReverse(t *testing.T) {
	a := Tuple{Proto: "udp", Src: "10.0.1.2", Dst: "10.0.2.2", SrcPort: 5000, DstPort: 5201}
	if !a.Equal(Tuple{Proto: "UDP", Src: "::ffff:10.0.1.2", Dst: "10.0.2.2", SrcPort: 5000, DstPort: 5201}) {
		t.Error("a mapped source or an upper-case protocol made the tuples differ")
	}
	if a.Equal(a.Reverse()) || !a.Reverse().Reverse().Equal(a) {
		t.Error("Reverse is not the other direction")
	}
	if got, want := a.String(), "udp src=10.0.1.2 dst=10.0.2.2 sport=5000 dport=5201"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
