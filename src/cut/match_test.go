package cut

import (
	"net/netip"
	"testing"
)

func TestCutNamesEitherDirection(t *testing.T) {
	c := Cut{
		Original: Tuple{Proto: "udp", Src: "10.0.1.2", Dst: "10.0.2.2", SrcPort: 5000, DstPort: 5201},
		Reply:    Tuple{Proto: "udp", Src: "10.0.2.2", Dst: "10.0.2.1", SrcPort: 5201, DstPort: 61000}, // masqueraded
	}
	for _, tc := range []struct {
		t    Tuple
		want bool
	}{
		{c.Original, true},
		{c.Original.Reverse(), true},
		{c.Reply, true},
		{Tuple{Proto: "UDP", Src: "::ffff:10.0.1.2", Dst: "10.0.2.2", SrcPort: 5000, DstPort: 5201}, true},
		{Tuple{Proto: "tcp", Src: "10.0.1.2", Dst: "10.0.2.2", SrcPort: 5000, DstPort: 5201}, false},
		{Tuple{Proto: "udp", Src: "10.0.1.2", Dst: "10.0.2.2", SrcPort: 5001, DstPort: 5201}, false},
	} {
		if got := c.Names(tc.t); got != tc.want {
			t.Errorf("Names(%v) = %v, want %v", tc.t, got, tc.want)
		}
	}
	if !c.HasAddressIn(netip.MustParsePrefix("10.0.2.0/24")) || c.HasAddressIn(netip.MustParsePrefix("192.0.2.0/24")) {
		t.Error("HasAddressIn wrong")
	}
}
