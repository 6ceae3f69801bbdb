package nft

import (
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// synced is the observed state that exactly matches s.
func synced(s netstate.FlowtableSpec) observed {
	devs := normalDevices(s.Devices)
	return observed{
		KernelFlowtable: netstate.KernelFlowtable{TablePresent: true, FlowtablePresent: true, Devices: devs, Hardware: s.Hardware, Counter: s.Counter,
			Hook: "ingress", ChainPresent: true, ForwardRule: true, OffloadAfterPackets: s.OffloadAfterPackets, FirewallDigest: s.FirewallDigest},
		chainShapeOK: true, ruleCount: 1,
	}
}

func kinds(ops []op) []opKind {
	out := []opKind{}
	for _, o := range ops {
		out = append(out, o.kind)
	}
	return out
}

func TestReconcile(t *testing.T) {
	sw := netstate.FlowtableSpec{Enabled: true, Devices: []string{"wan0", "lan0"}, Counter: true}
	hw := sw
	hw.Hardware = true
	noCounter := sw
	noCounter.Counter = false
	plusWan1 := sw
	plusWan1.Devices = []string{"lan0", "wan0", "wan1"}
	minusWan0 := sw
	minusWan0.Devices = []string{"lan0"}
	swapped := sw
	swapped.Devices = []string{"lan0", "wan1"}
	after30 := sw
	after30.OffloadAfterPackets = 30
	rulesA := sw
	rulesA.FirewallDigest, rulesA.RecheckOnRuleChange = "aaaa", true
	rulesB := rulesA
	rulesB.FirewallDigest = "bbbb"
	rulesBOff := rulesB
	rulesBOff.RecheckOnRuleChange = false
	rulesUnread := rulesA
	rulesUnread.FirewallDigest = ""
	rulesBMoreDevs := rulesB
	rulesBMoreDevs.Devices = []string{"lan0", "wan0", "wan1"}

	noFlowtable := synced(sw)
	noFlowtable.FlowtablePresent, noFlowtable.Devices = false, nil
	noChain := synced(sw)
	noChain.ChainPresent, noChain.ForwardRule, noChain.ruleCount = false, false, 0
	badChain := synced(sw)
	badChain.chainShapeOK = false
	extraRule := synced(sw)
	extraRule.ruleCount = 2
	foreignRule := synced(sw)
	foreignRule.ForwardRule = false
	wrongPriority := synced(sw)
	wrongPriority.Priority = 10

	cases := []struct {
		name string
		have observed
		want netstate.FlowtableSpec
		ops  []opKind
		devs [][]string // devices of each op, where it names some
	}{
		{"off and absent", observed{}, netstate.FlowtableSpec{}, []opKind{}, nil},
		{"off and present", synced(sw), netstate.FlowtableSpec{}, []opKind{opDeleteTable}, nil},
		{"first apply", observed{}, sw, []opKind{opCreateTable}, [][]string{{"lan0", "wan0"}}},
		{"in sync", synced(sw), sw, []opKind{}, nil},
		{"device added", synced(sw), plusWan1, []opKind{opAddDevices}, [][]string{{"wan1"}}},
		{"device removed", synced(sw), minusWan0, []opKind{opDelDevices}, [][]string{{"wan0"}}},
		{"device swapped", synced(sw), swapped, []opKind{opDelDevices, opAddDevices}, [][]string{{"wan0"}, {"wan1"}}},
		{"hardware on", synced(sw), hw, []opKind{opDeleteTable, opCreateTable}, [][]string{nil, {"lan0", "wan0"}}},
		{"hardware off", synced(hw), sw, []opKind{opDeleteTable, opCreateTable}, nil},
		{"counter off", synced(sw), noCounter, []opKind{opDeleteTable, opCreateTable}, nil},
		{"flowtable priority changed by someone", wrongPriority, sw, []opKind{opDeleteTable, opCreateTable}, nil},
		{"flowtable deleted by someone", noFlowtable, sw, []opKind{opAddFlowtable}, [][]string{{"lan0", "wan0"}}},
		{"chain deleted by someone", noChain, sw, []opKind{opAddChain}, nil},
		{"chain reshaped by someone", badChain, sw, []opKind{opReplaceChain}, nil},
		{"rule added by someone", extraRule, sw, []opKind{opReplaceRules}, nil},
		{"rule replaced by someone", foreignRule, sw, []opKind{opReplaceRules}, nil},
		{"offload after packets asked", synced(sw), after30, []opKind{opReplaceRules}, nil},
		{"offload after packets in sync", synced(after30), after30, []opKind{}, nil},
		{"offload after packets dropped", synced(after30), sw, []opKind{opReplaceRules}, nil},
		{"fw4 rules re-rendered unchanged", synced(rulesA), rulesA, []opKind{}, nil},
		{"fw4 rules changed: a fresh flowtable", synced(rulesA), rulesB, []opKind{opDeleteTable, opCreateTable}, nil},
		{"fw4 rules changed and devices too", synced(rulesA), rulesBMoreDevs, []opKind{opDeleteTable, opCreateTable}, [][]string{nil, {"lan0", "wan0", "wan1"}}},
		{"fw4 rules changed, recheck off: recorded only", synced(rulesA), rulesBOff, []opKind{opReplaceRules}, nil},
		{"fw4 rules first seen: recorded only", synced(sw), rulesB, []opKind{opReplaceRules}, nil},
		{"fw4 rules not read: the record stays", synced(rulesA), rulesUnread, []opKind{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ops := reconcile(c.have, c.want)
			if got := kinds(ops); !reflect.DeepEqual(got, c.ops) {
				t.Fatalf("ops = %v, want %v", got, c.ops)
			}
			for i, want := range c.devs {
				if want != nil && !reflect.DeepEqual(ops[i].devices, want) {
					t.Errorf("op %d devices = %v, want %v", i, ops[i].devices, want)
				}
			}
			for _, o := range ops {
				if o.action == "" {
					t.Errorf("op %v has no action text", o.kind)
				}
			}
		})
	}
}

// model applies ops the way the kernel does, for the convergence test.
func model(o observed, ops []op) observed {
	for _, p := range ops {
		switch p.kind {
		case opDeleteTable:
			o = observed{}
		case opCreateTable:
			o = synced(netstate.FlowtableSpec{Enabled: true, Devices: p.devices, Hardware: p.hardware, Counter: p.counter, OffloadAfterPackets: p.after, FirewallDigest: p.digest})
		case opAddFlowtable:
			o.FlowtablePresent, o.Devices, o.Hardware, o.Counter, o.Hook, o.Priority = true, p.devices, p.hardware, p.counter, "ingress", 0
		case opAddDevices:
			o.Devices = append(append([]string{}, o.Devices...), p.devices...)
			sort.Strings(o.Devices)
		case opDelDevices:
			o.Devices = difference(o.Devices, p.devices)
		case opAddChain, opReplaceChain, opReplaceRules:
			o.ChainPresent, o.chainShapeOK, o.ForwardRule, o.ruleCount, o.OffloadAfterPackets, o.FirewallDigest = true, true, true, 1, p.after, p.digest
		}
	}
	return o
}

// Any sequence of specs converges in one step, a second reconcile finds
// nothing to do, and only a flag change or (recheck on) a change of
// fw4's rules ever recreates the flowtable.
func TestReconcileConvergesInAnyOrder(t *testing.T) {
	specs := []netstate.FlowtableSpec{
		{},
		{Enabled: true, Counter: true},
		{Enabled: true, Devices: []string{"lan0"}, Counter: true},
		{Enabled: true, Devices: []string{"lan0", "wan0"}, Counter: true},
		{Enabled: true, Devices: []string{"wan0", "wan1", "lan0"}, Counter: true},
		{Enabled: true, Devices: []string{"lan0", "wan0"}, Hardware: true, Counter: true},
		{Enabled: true, Devices: []string{"eth0.2"}, Hardware: true},
		{Enabled: true, Devices: []string{"lan0", "wan0"}, Counter: true, OffloadAfterPackets: 30},
		{Enabled: true, Devices: []string{"lan0", "wan0"}, Counter: true, FirewallDigest: "aaaa", RecheckOnRuleChange: true},
		{Enabled: true, Devices: []string{"lan0", "wan0"}, Counter: true, FirewallDigest: "bbbb", RecheckOnRuleChange: true},
		{Enabled: true, Devices: []string{"lan0", "wan0"}, Counter: true, FirewallDigest: "cccc"},
	}
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 200; round++ {
		var o observed
		for _, i := range rng.Perm(len(specs)) {
			s := specs[i]
			before := o
			ops := reconcile(o, s)
			o = model(o, ops)
			if again := reconcile(o, s); len(again) != 0 {
				t.Fatalf("round %d: after %v the spec %+v still needs %v", round, kinds(ops), s, kinds(again))
			}
			if s.Enabled && (!reflect.DeepEqual(normalDevices(s.Devices), normalDevices(o.Devices)) || o.Hardware != s.Hardware || o.Counter != s.Counter || o.OffloadAfterPackets != s.OffloadAfterPackets) {
				t.Fatalf("round %d: model %+v does not match spec %+v", round, o.KernelFlowtable, s)
			}
			if s.FirewallDigest != "" && o.FirewallDigest != s.FirewallDigest {
				t.Fatalf("round %d: recorded digest %q, spec %q", round, o.FirewallDigest, s.FirewallDigest)
			}
			recreated := len(ops) > 0 && ops[0].kind == opDeleteTable && s.Enabled
			flagsChanged := s.Enabled && before.FlowtablePresent && (before.Hardware != s.Hardware || before.Counter != s.Counter)
			rulesChanged := s.Enabled && before.FlowtablePresent && before.ForwardRule && s.RecheckOnRuleChange &&
				before.FirewallDigest != "" && s.FirewallDigest != "" && before.FirewallDigest != s.FirewallDigest
			if recreated != (flagsChanged || rulesChanged) {
				t.Fatalf("round %d: %+v -> %+v recreated=%v, flags changed=%v, fw4 rules changed=%v", round, before.KernelFlowtable, s, recreated, flagsChanged, rulesChanged)
			}
		}
	}
}
