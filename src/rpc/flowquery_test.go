package rpc

import "testing"

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
