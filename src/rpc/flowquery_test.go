package rpc

import (
	"net/netip"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
)

func TestFlowQueryMatch(t *testing.T) {
	flows := newFake().flows // 1: tcp v4 software; 2: udp v6 not offloaded
	cases := []struct {
		q    FlowQuery
		want []bool
	}{
		{FlowQuery{}, []bool{true, true}},
		{FlowQuery{Offload: "any"}, []bool{true, false}},
		{FlowQuery{Offload: "none"}, []bool{false, true}},
		{FlowQuery{Offload: "software"}, []bool{true, false}},
		{FlowQuery{Offload: "hardware"}, []bool{false, false}},
		{FlowQuery{Proto: "udp"}, []bool{false, true}},
		{FlowQuery{Address: "192.168.1.23"}, []bool{true, false}},
		{FlowQuery{Address: "198.51.100.0/24"}, []bool{true, false}}, // the reply's (NATed) destination
		{FlowQuery{Address: "2001:db8::/32"}, []bool{false, true}},
		{FlowQuery{Address: "::ffff:93.184.216.34"}, []bool{true, false}},
		{FlowQuery{Address: "10.0.0.0/8"}, []bool{false, false}},
		{FlowQuery{Address: "2001:db8::53", Proto: "udp", Offload: "none"}, []bool{false, true}},
	}
	for _, tc := range cases {
		for i, f := range flows {
			if got := tc.q.Match(f); got != tc.want[i] {
				t.Errorf("%+v on flow %d: %v, want %v", tc.q, f.ID, got, tc.want[i])
			}
		}
	}
}

func TestMarkLocal(t *testing.T) {
	tuple := func(src, dst string) cut.Tuple {
		return cut.Tuple{Proto: "tcp", Src: src, Dst: dst, SrcPort: 1, DstPort: 2}
	}
	flow := func(o, r cut.Tuple) netstate.Flow { return netstate.Flow{Original: o, Reply: r} }
	flows := []netstate.Flow{
		flow(tuple("192.168.1.23", "192.168.1.1"), tuple("192.168.1.1", "192.168.1.23")),     // LuCI session to the router
		flow(tuple("2001:db8::23", "2001:db8::1"), tuple("2001:db8::1", "2001:db8::23")),     // SSH to the router over IPv6
		flow(tuple("192.168.1.23", "93.184.216.34"), tuple("93.184.216.34", "198.51.100.2")), // masqueraded: router only in the reply
		flow(tuple("203.0.113.9", "198.51.100.2"), tuple("192.168.1.50", "203.0.113.9")),     // port forward: router only in the original
		flow(tuple("198.51.100.2", "9.9.9.9"), tuple("9.9.9.9", "198.51.100.2")),             // the router's own DNS query
		flow(tuple("10.0.1.2", "10.0.2.2"), tuple("10.0.2.2", "10.0.1.2")),                   // forwarded, no NAT
	}
	own := []netip.Addr{netip.MustParseAddr("192.168.1.1"), netip.MustParseAddr("::ffff:198.51.100.2"), netip.MustParseAddr("2001:db8::1")}
	MarkLocal(flows, own)
	want := []bool{true, true, false, false, true, false}
	for i, f := range flows {
		if f.Local != want[i] {
			t.Errorf("flow %d %v -> %v: local %v, want %v", i, f.Original, f.Reply, f.Local, want[i])
		}
	}
}
