package daemon

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/nft"
	"github.com/fastpath-wrt/fastpath/src/plan"
)

func TestEffectiveIsTheKernels(t *testing.T) {
	sw := plan.Mode{Requested: "software", Effective: "software", Reason: "software offload requested"}
	spec := netstate.FlowtableSpec{Enabled: true, Devices: []string{"lan0", "wan0"}, Counter: true}
	have := netstate.KernelFlowtable{TablePresent: true, FlowtablePresent: true, ForwardRule: true, Devices: []string{"wan0", "lan0"}, Counter: true}

	if got, why := effective(sw, spec, have, nil); got != "software" || why != sw.Reason {
		t.Errorf("agreeing kernel: %s, %q", got, why)
	}
	hw := have
	hw.Hardware = true
	if got, _ := effective(sw, spec, hw, nil); got != "hardware" {
		t.Errorf("flags offload in the kernel: %s, want hardware", got)
	}
	if got, why := effective(sw, spec, netstate.KernelFlowtable{}, []string{"this kernel has no flowtable support"}); got != "off" ||
		!strings.Contains(why, "no flowtable support") {
		t.Errorf("no flowtable: %s, %q", got, why)
	}
	noRule := have
	noRule.ForwardRule = false
	if got, _ := effective(sw, spec, noRule, nil); got != "off" {
		t.Errorf("a flowtable nothing adds flows to offloads nothing: %s", got)
	}
}

func TestInSync(t *testing.T) {
	spec := netstate.FlowtableSpec{Enabled: true, Devices: []string{"lan0", "wan0"}, Counter: true}
	k := netstate.KernelFlowtable{TablePresent: true, FlowtablePresent: true, ForwardRule: true, Devices: []string{"wan0", "lan0"}, Counter: true}
	if !inSync(spec, k) {
		t.Error("same devices in another order are in sync")
	}
	after := spec
	after.OffloadAfterPackets = 30
	if inSync(after, k) {
		t.Error("a rule that offloads at once is not in sync with offload_after_packets 30")
	}
	k.Devices = []string{"lan0"}
	if inSync(spec, k) {
		t.Error("a missing device is not in sync")
	}
	if !inSync(netstate.FlowtableSpec{}, netstate.KernelFlowtable{}) || inSync(netstate.FlowtableSpec{}, netstate.KernelFlowtable{TablePresent: true}) {
		t.Error("disabled: in sync exactly when the table is gone")
	}
}

func TestKernelRefusalHoldsUntilTheKernelChanges(t *testing.T) {
	refusal := fmt.Errorf("applying: %w", nft.ErrNoFlowtable)
	const before, after = "6.1 flowtable=true modules=false,false", "6.1 flowtable=true modules=true,true"
	steps := []struct {
		what      string
		look      string
		flowtable bool
		errs      []error
		want      string // the reason kept, "" for none
	}{
		{"software asked, kernel refuses", before, true, []error{refusal}, refusal.Error()},
		{"set off: nothing asks the kernel", before, false, nil, refusal.Error()},
		{"reload, still off, same kernel", before, false, []error{errors.New("some other error")}, refusal.Error()},
		{"the modules are loaded", after, false, nil, ""},
		{"software asked again, refused again", after, true, []error{fmt.Errorf("x: %w", nft.ErrNoFlowOffloadExpr)}, "x: " + nft.ErrNoFlowOffloadExpr.Error()},
		{"the kernel takes it", after, true, nil, ""},
	}
	var k kernelRefusal
	for _, s := range steps {
		k = k.after(s.look, s.flowtable, s.errs)
		if k.reason != s.want {
			t.Fatalf("%s: kept %q, want %q", s.what, k.reason, s.want)
		}
	}
}
