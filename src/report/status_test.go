package report

import (
	"strings"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/ppe"
	"github.com/fastpath-wrt/fastpath/src/status"
)

func TestStatusTextShowsTheEngineBesideConntrack(t *testing.T) {
	st := status.Status{
		Flows:   netstate.FlowCounts{Total: 40, Offloaded: 12, HWOffloaded: 3},
		HWFlows: ppe.Summary{Engine: "MediaTek PPE", Read: true, Bound: 6, Reason: "hardware flows in the PPE, one entry per direction: ppe0: 6 bound (2 IPv6); MT7621's PPE keeps no byte counters"},
		Kernel:  netstate.KernelFeatures{Release: "7.2.13", IPIPRxAccel: true, IP6TnlPath: true},
	}
	got := StatusText(st)
	for _, want := range []string{
		"flows       40 tracked, 12 offloaded (3 in hardware)\nhardware    hardware flows in the PPE, one entry per direction: ppe0: 6 bound (2 IPv6); MT7621's PPE keeps no byte counters\n",
		"IPIP acceleration yes, ip6tnl path yes (IPv6 inside only)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("status text lacks %q:\n%s", want, got)
		}
	}
	st.HWFlows = ppe.Summary{}
	if got := StatusText(st); strings.Contains(got, "hardware    ") {
		t.Errorf("no engine, yet a hardware line:\n%s", got)
	}
}
