package report

import (
	"strings"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

func TestCutSummaryTextSaysEachDevicesBackend(t *testing.T) {
	s := cut.Summary{Enabled: true, InFastpath: true, Devices: []string{"br-lan", "eth0"}, Backends: []cut.Backend{
		{Device: "br-lan", Backend: "netdev", Reason: "the driver of br-lan has no native XDP: operation not supported; cutting at netdev ingress"},
		{Device: "eth0", Backend: "xdp", Reason: "native XDP in the driver (program 12)"},
	}}
	got := CutSummaryText(s)
	for _, want := range []string{
		"cut on      br-lan: netdev (the driver of br-lan has no native XDP: operation not supported; cutting at netdev ingress)\n",
		"cut on      eth0: xdp (native XDP in the driver (program 12))\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("fastpath cuts lacks %q:\n%s", want, got)
		}
	}
}
