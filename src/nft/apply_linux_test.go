package nft

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

const (
	newTable     = unix.NFT_MSG_NEWTABLE
	delTable     = unix.NFT_MSG_DELTABLE
	newChain     = unix.NFT_MSG_NEWCHAIN
	newSet       = unix.NFT_MSG_NEWSET
	newSetElem   = unix.NFT_MSG_NEWSETELEM
	newRule      = unix.NFT_MSG_NEWRULE
	newFlowtable = nftables.NFT_MSG_NEWFLOWTABLE
	delFlowtable = nftables.NFT_MSG_DELFLOWTABLE
)

// wholeTable is the batch of a first apply:
//
//	nft add table inet fastpath
//	nft add flowtable inet fastpath ft { hook ingress priority filter; devices = {...}; counter; }
//	nft add chain inet fastpath forward { type filter hook forward priority filter - 1; policy accept; }
//	nft add rule inet fastpath forward meta l4proto { tcp, udp } flow add @ft   (set, elements, rule)
var wholeTable = []int{newTable, newFlowtable, newChain, newSet, newSetElem, newRule}

// replaceRule flushes our chain and adds the rule again (set, elements, rule).
var replaceRule = []int{unix.NFT_MSG_DELRULE, newSet, newSetElem, newRule}

func TestApplySendsOnlyTheDifference(t *testing.T) {
	k, b := newFakeKernel(t)
	spec := netstate.FlowtableSpec{Enabled: true, Devices: []string{"wan0", "lan0"}, Counter: true}
	steps := []struct {
		name      string
		change    func(*netstate.FlowtableSpec)
		batch     []int    // nil: no batch at all
		devices   []string // devices named by the flowtable message
		recreated bool
		kernel    []string // the fake kernel's devices after
	}{
		{"first apply", func(*netstate.FlowtableSpec) {}, wholeTable, []string{"lan0", "wan0"}, false, []string{"lan0", "wan0"}},
		{"same spec again", func(*netstate.FlowtableSpec) {}, nil, nil, false, []string{"lan0", "wan0"}},
		{"device added", func(s *netstate.FlowtableSpec) { s.Devices = []string{"lan0", "wan0", "wan1"} }, []int{newFlowtable}, []string{"wan1"}, false, []string{"lan0", "wan0", "wan1"}},
		{"device removed", func(s *netstate.FlowtableSpec) { s.Devices = []string{"lan0", "wan1"} }, []int{delFlowtable}, []string{"wan0"}, false, []string{"lan0", "wan1"}},
		{"again after removal", func(*netstate.FlowtableSpec) {}, nil, nil, false, []string{"lan0", "wan1"}},
		// A new rule in the same chain: the flowtable and its flows stay.
		{"offload after 30 packets", func(s *netstate.FlowtableSpec) { s.OffloadAfterPackets = 30 }, replaceRule, nil, false, []string{"lan0", "wan1"}},
		{"again after 30 packets", func(*netstate.FlowtableSpec) {}, nil, nil, false, []string{"lan0", "wan1"}},
		{"offload after 1000 packets", func(s *netstate.FlowtableSpec) { s.OffloadAfterPackets = 1000 }, replaceRule, nil, false, []string{"lan0", "wan1"}},
		{"offload at once again", func(s *netstate.FlowtableSpec) { s.OffloadAfterPackets = 0 }, replaceRule, nil, false, []string{"lan0", "wan1"}},
		{"again at once", func(*netstate.FlowtableSpec) {}, nil, nil, false, []string{"lan0", "wan1"}},
		// fw4's rules: recorded in the rule's comment, then compared.
		{"fw4 rules first seen", func(s *netstate.FlowtableSpec) { s.FirewallDigest, s.RecheckOnRuleChange = "aaaa", true }, replaceRule, nil, false, []string{"lan0", "wan1"}},
		{"fw4 re-rendered the same rules", func(*netstate.FlowtableSpec) {}, nil, nil, false, []string{"lan0", "wan1"}},
		{"fw4 rules not read this time", func(s *netstate.FlowtableSpec) { s.FirewallDigest = "" }, nil, nil, false, []string{"lan0", "wan1"}},
		{"fw4 rules changed", func(s *netstate.FlowtableSpec) { s.FirewallDigest = "bbbb" }, append([]int{delTable}, wholeTable...), []string{"lan0", "wan1"}, true, []string{"lan0", "wan1"}},
		{"again after the recheck", func(*netstate.FlowtableSpec) {}, nil, nil, false, []string{"lan0", "wan1"}},
		{"fw4 rules changed, recheck off", func(s *netstate.FlowtableSpec) { s.FirewallDigest, s.RecheckOnRuleChange = "cccc", false }, replaceRule, nil, false, []string{"lan0", "wan1"}},
		{"offload flag on", func(s *netstate.FlowtableSpec) { s.Hardware = true }, append([]int{delTable}, wholeTable...), []string{"lan0", "wan1"}, true, []string{"lan0", "wan1"}},
		{"again with offload", func(*netstate.FlowtableSpec) {}, nil, nil, false, []string{"lan0", "wan1"}},
		{"disabled", func(s *netstate.FlowtableSpec) { s.Enabled = false }, []int{delTable}, nil, false, nil},
		{"disabled again", func(*netstate.FlowtableSpec) {}, nil, nil, false, nil},
	}
	for _, st := range steps {
		st.change(&spec)
		_, before := k.lastBatch()
		res, err := b.Apply(spec)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		types, after := k.lastBatch()
		if st.batch == nil {
			if after != before || res.Changed || len(res.Actions) > 0 {
				t.Fatalf("%s: sent a batch (%v) or reported a change (%+v); want nothing", st.name, types, res)
			}
			continue
		}
		if after != before+1 {
			t.Fatalf("%s: %d batches sent, want exactly one", st.name, after-before)
		}
		if !reflect.DeepEqual(types, st.batch) {
			t.Fatalf("%s: batch message types %v, want %v", st.name, types, st.batch)
		}
		if !res.Changed || len(res.Actions) == 0 || res.Recreated != st.recreated || res.Rechecked != (st.recreated && spec.FirewallDigest == "bbbb") {
			t.Fatalf("%s: result %+v (want changed, actions, recreated=%v)", st.name, res, st.recreated)
		}
		if st.devices != nil {
			var got []string
			for _, m := range k.batches[len(k.batches)-1] {
				if mt := msgType(m); mt == newFlowtable || mt == delFlowtable {
					got, _, _ = flowtableOf(m)
				}
			}
			if !reflect.DeepEqual(got, st.devices) {
				t.Fatalf("%s: flowtable message names %v, want %v", st.name, got, st.devices)
			}
		}
		var have []string
		if k.ft != nil {
			have = sortedCopy(k.ft.devices)
		}
		if !reflect.DeepEqual(have, st.kernel) {
			t.Fatalf("%s: kernel devices %v, want %v", st.name, have, st.kernel)
		}
	}
}

func TestApplyKeepsTheFlowtableWhileDevicesChange(t *testing.T) {
	k, b := newFakeKernel(t)
	for _, devs := range [][]string{{"lan0"}, {"lan0", "wan0"}, {"wan0"}, {}, {"lan0", "wan1"}} {
		if _, err := b.Apply(netstate.FlowtableSpec{Enabled: true, Devices: devs, Counter: true}); err != nil {
			t.Fatalf("devices %v: %v", devs, err)
		}
		got, err := b.Read()
		if err != nil {
			t.Fatal(err)
		}
		if got.Handle != 1 || strings.Join(got.Devices, ",") != strings.Join(devs, ",") || !got.ForwardRule || !got.ChainPresent {
			t.Fatalf("devices %v: read back %+v; want the same flowtable (handle 1) with these devices", devs, got)
		}
	}
	if n := len(k.batches); n != 5 {
		t.Fatalf("%d batches for 5 changes", n)
	}
}

func TestApplyRepairsWhatOthersChanged(t *testing.T) {
	k, b := newFakeKernel(t)
	spec := netstate.FlowtableSpec{Enabled: true, Devices: []string{"lan0"}, Counter: true}
	if _, err := b.Apply(spec); err != nil {
		t.Fatal(err)
	}
	k.rules = append(k.rules, k.rules[0]) // someone added a second rule
	res, err := b.Apply(spec)
	if types, _ := k.lastBatch(); err != nil || !reflect.DeepEqual(types, []int{unix.NFT_MSG_DELRULE, newSet, newSetElem, newRule}) {
		t.Fatalf("extra rule: batch %v, %+v, %v; want a flushed chain and our rule", types, res, err)
	}
	k.chain, k.rules = nil, nil // someone deleted the chain
	if _, err := b.Apply(spec); err != nil {
		t.Fatal(err)
	}
	if types, _ := k.lastBatch(); !reflect.DeepEqual(types, []int{newChain, newSet, newSetElem, newRule}) {
		t.Fatalf("deleted chain: batch %v", types)
	}
	if res, err := b.Apply(spec); err != nil || res.Changed {
		t.Fatalf("after repair: %+v %v; want no change", res, err)
	}
}

func failOn(msg int, errno unix.Errno, onlyHardware bool) func(netlink.Message) unix.Errno {
	return func(m netlink.Message) unix.Errno {
		if msgType(m) != msg {
			return 0
		}
		if onlyHardware {
			if _, flags, _ := flowtableOf(m); flags&uint32(nftables.FlowtableFlagsHWOffload) == 0 {
				return 0
			}
		}
		return errno
	}
}

func TestApplyExplainsKernelErrors(t *testing.T) {
	cases := []struct {
		name       string
		fail       func(netlink.Message) unix.Errno
		missing    string // a device the namespace lacks
		hardware   bool
		want       error
		words      []string
		hwRefused  bool
		deviceName string
	}{
		{"no flowtable type", failOn(newFlowtable, unix.ENOENT, false), "", false, ErrNoFlowtable,
			[]string{"CONFIG_NF_FLOW_TABLE", "nf_flow_table_inet", "kmod-nft-offload", "not loaded here"}, false, ""},
		{"no flow_offload expression", failOn(newRule, unix.ENOENT, false), "", false, ErrNoFlowOffloadExpr,
			[]string{"nft_flow_offload", "CONFIG_NFT_FLOW_OFFLOAD"}, false, ""},
		{"offload refused", failOn(newFlowtable, unix.EOPNOTSUPP, true), "", true, ErrHardwareUnsupported,
			[]string{"flags offload", "lan0, wan0"}, true, ""},
		{"missing device", failOn(newFlowtable, unix.ENOENT, false), "wan0", false, ErrNoDevice,
			[]string{`"wan0"`}, false, "wan0"},
		{"anything else", failOn(newChain, unix.EINVAL, false), "", false, unix.EINVAL,
			[]string{"created table inet fastpath"}, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, b := newFakeKernel(t)
			k.fail = c.fail
			b.linkExists = func(name string) (bool, error) { return name != c.missing, nil }
			res, err := b.Apply(netstate.FlowtableSpec{Enabled: true, Devices: []string{"lan0", "wan0"}, Hardware: c.hardware, Counter: true})
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want errors.Is %v", err, c.want)
			}
			for _, w := range c.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q: %v", w, err)
				}
			}
			if res.HardwareRefused != c.hwRefused || res.Changed {
				t.Errorf("result %+v, want HardwareRefused=%v and no change", res, c.hwRefused)
			}
			var de *DeviceError
			if c.deviceName != "" && (!errors.As(err, &de) || de.Device != c.deviceName) {
				t.Errorf("want a DeviceError naming %s, got %v", c.deviceName, err)
			}
			if k.table != nil {
				t.Errorf("a failed batch left a table in the kernel")
			}
		})
	}
}

func TestApplyWithFallbackRunsSoftware(t *testing.T) {
	k, b := newFakeKernel(t)
	k.fail = failOn(newFlowtable, unix.EOPNOTSUPP, true)
	res, err := b.ApplyWithFallback(netstate.FlowtableSpec{Enabled: true, Devices: []string{"lan0"}, Hardware: true, Counter: true})
	if err != nil || !res.Changed || !res.HardwareRefused || !strings.Contains(res.Actions[0], "software") {
		t.Fatalf("fallback: %+v, %v", res, err)
	}
	if k.ft == nil || k.ft.flags&uint32(nftables.FlowtableFlagsHWOffload) != 0 {
		t.Fatalf("kernel flowtable after fallback: %+v; want software", k.ft)
	}
	// Not a hardware problem: no fallback, the error stays.
	k2, b2 := newFakeKernel(t)
	k2.fail = failOn(newFlowtable, unix.ENOENT, false)
	if _, err := b2.ApplyWithFallback(netstate.FlowtableSpec{Enabled: true, Devices: []string{"lan0"}, Hardware: true}); !errors.Is(err, ErrNoFlowtable) || len(k2.batches) != 1 {
		t.Fatalf("no-flowtable kernel: %v after %d batches; want ErrNoFlowtable after one", err, len(k2.batches))
	}
}

func TestCleanupIsIdempotent(t *testing.T) {
	k, b := newFakeKernel(t)
	if err := b.Cleanup(); err != nil || len(k.batches) != 0 {
		t.Fatalf("Cleanup with no table: %v, %d batches", err, len(k.batches))
	}
	if _, err := b.Apply(netstate.FlowtableSpec{Enabled: true, Devices: []string{"lan0"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := b.Cleanup(); err != nil {
			t.Fatalf("Cleanup #%d: %v", i+1, err)
		}
	}
	if types, n := k.lastBatch(); n != 2 || !reflect.DeepEqual(types, []int{delTable}) || k.table != nil {
		t.Fatalf("after two Cleanups: %d batches, last %v, table %v", n, types, k.table != nil)
	}
}

func TestApplyRefusesAnInvalidSpecBeforeTheKernel(t *testing.T) {
	k, b := newFakeKernel(t)
	if _, err := b.Apply(netstate.FlowtableSpec{Enabled: true, Devices: []string{"lan0", "bad name"}}); err == nil || !strings.Contains(err.Error(), `"bad name"`) {
		t.Fatalf("err = %v", err)
	}
	if len(k.batches) != 0 {
		t.Fatal("a batch was sent for an invalid spec")
	}
}
