package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/nft"
)

// fakeKernel holds what the kernel would: our two tables, beyond the life
// of any one reconciler (a restart finds them). It follows what Apply,
// Sync and Cleanup promise: the same state twice sends nothing, devices
// change without re-creating the flowtable, a change of flags re-creates
// it, a refusal changes nothing.
type fakeKernel struct {
	root string // the fixture root: a flowtable needs nf_flow_table under sys/module, as on a router

	flowtable netstate.KernelFlowtable
	handles   uint64 // handle of the last flowtable made

	cutTable bool
	cutSets  string // expiry and size the sets were made with

	refusesHardware bool     // the devices' driver has no flow-offload hook (EOPNOTSUPP)
	changes         []string // what the last pass changed, in Apply's words
}

func (k *fakeKernel) change(format string, args ...any) {
	k.changes = append(k.changes, fmt.Sprintf(format, args...))
}

// canFlowtable: the kernel makes a flowtable once its modules are loaded.
func (k *fakeKernel) canFlowtable() bool {
	for _, m := range []string{"nf_flow_table", "nf_flow_table_inet"} {
		if _, err := os.Stat(filepath.Join(k.root, "sys/module", m)); err != nil {
			return false
		}
	}
	return true
}

// foreignDelete is `nft delete table inet fastpath` by someone else.
func (k *fakeKernel) foreignDelete() { k.flowtable = netstate.KernelFlowtable{Devices: []string{}} }

// text is the kernel's state as the golden cases print it.
func (k *fakeKernel) text() string {
	var b strings.Builder
	f := k.flowtable
	if !f.TablePresent {
		b.WriteString("table inet fastpath: none\n")
	} else {
		flags := []string{}
		if f.Counter {
			flags = append(flags, "counter")
		}
		if f.Hardware {
			flags = append(flags, "offload")
		}
		// No handle: the changes say when the flowtable was re-created.
		fmt.Fprintf(&b, "table inet fastpath: flowtable ft, devices {%s}, flags {%s}, forward rule %v",
			strings.Join(f.Devices, ", "), strings.Join(flags, ", "), f.ForwardRule)
		if f.OffloadAfterPackets > 0 {
			fmt.Fprintf(&b, " after %d packets", f.OffloadAfterPackets)
		}
		b.WriteString("\n")
	}
	if k.cutTable {
		fmt.Fprintf(&b, "table netdev fastpath_cut: sets %s\n", k.cutSets)
	} else {
		b.WriteString("table netdev fastpath_cut: none\n")
	}
	return b.String()
}

// fakeFlowtable is nft.Backend over the fake kernel.
type fakeFlowtable struct{ k *fakeKernel }

func (f fakeFlowtable) Apply(s netstate.FlowtableSpec) (nft.Result, error) {
	k := f.k
	if !s.Enabled {
		return nft.Result{}, f.Cleanup()
	}
	if !k.canFlowtable() {
		return nft.Result{}, nft.ErrNoFlowtable
	}
	if s.Hardware && k.refusesHardware {
		return nft.Result{HardwareRefused: true}, nft.ErrHardwareUnsupported
	}
	want := netstate.KernelFlowtable{TablePresent: true, FlowtablePresent: true, Devices: slices.Clone(s.Devices),
		Hardware: s.Hardware, Counter: s.Counter, Hook: "ingress", ForwardRule: true,
		OffloadAfterPackets: s.OffloadAfterPackets, ChainPresent: true}
	if want.Devices == nil {
		want.Devices = []string{}
	}
	have := k.flowtable
	var res nft.Result
	switch {
	case !have.TablePresent:
		k.handles++
		res.Actions = append(res.Actions, fmt.Sprintf("created table inet fastpath with flowtable ft on {%s}", strings.Join(want.Devices, ", ")))
	case have.Hardware != want.Hardware || have.Counter != want.Counter:
		k.handles++
		res.Recreated = true
		res.Actions = append(res.Actions, "re-created table inet fastpath: the flowtable's flags changed")
	default:
		if add := minus(want.Devices, have.Devices); len(add) > 0 {
			res.Actions = append(res.Actions, fmt.Sprintf("added devices {%s} to flowtable ft", strings.Join(add, ", ")))
		}
		if del := minus(have.Devices, want.Devices); len(del) > 0 {
			res.Actions = append(res.Actions, fmt.Sprintf("removed devices {%s} from flowtable ft", strings.Join(del, ", ")))
		}
		if have.OffloadAfterPackets != want.OffloadAfterPackets {
			res.Actions = append(res.Actions, "replaced the forward rule")
		}
	}
	want.Handle = k.handles
	k.flowtable = want
	res.Changed = len(res.Actions) > 0
	for _, a := range res.Actions {
		k.change("%s", a)
	}
	return res, nil
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func (f fakeFlowtable) Cleanup() error {
	if f.k.flowtable.TablePresent {
		f.k.change("deleted table inet fastpath")
	}
	f.k.foreignDelete()
	return nil
}

func (f fakeFlowtable) Read() (netstate.KernelFlowtable, error) {
	k := f.k.flowtable
	k.Devices = slices.Clone(k.Devices)
	if k.Devices == nil {
		k.Devices = []string{}
	}
	return k, nil
}

func (f fakeFlowtable) AnyFlowtable() (bool, error) { return f.k.flowtable.FlowtablePresent, nil }

// fakeCut is engine.Engine over the fake kernel: its table, and the
// summary an engine keeps in memory (lost with a restart).
type fakeCut struct {
	k       *fakeKernel
	cfg     cut.Config
	devices []string
	synced  bool
}

func (c *fakeCut) Sync(devices []string, cfg cut.Config) error {
	cfg, err := cfg.Normalized()
	if err != nil {
		return err
	}
	c.cfg, c.devices, c.synced = cfg, cut.SortedDevices(devices), true
	if !cfg.Enabled || !cfg.InFastpath {
		return c.Cleanup()
	}
	sets := fmt.Sprintf("timeout %s, size %d", cfg.Expiry, cfg.SetSize)
	switch {
	case !c.k.cutTable:
		c.k.change("created table netdev fastpath_cut (%s)", sets)
	case c.k.cutSets != sets:
		c.k.change("re-created the cut sets (%s)", sets)
	}
	c.k.cutTable, c.k.cutSets = true, sets
	return nil
}

func (c *fakeCut) Cleanup() error {
	if c.k.cutTable {
		c.k.change("deleted table netdev fastpath_cut")
	}
	c.k.cutTable, c.k.cutSets = false, ""
	return nil
}

func (c *fakeCut) Summary() cut.Summary {
	s := cut.Summary{Enabled: c.cfg.Enabled, InFastpath: c.synced && c.k.cutTable, Devices: append([]string{}, c.devices...),
		Expiry: c.cfg.Expiry.Seconds(), SetSize: c.cfg.SetSize, Blocklists: []cut.Blocklist{}, Cuts: []cut.Cut{}}
	if !c.synced {
		s.Reason = "not set up yet"
	}
	return s
}

// fakeFlows is conntrack with a few entries, offloaded while a flowtable is there.
type fakeFlows struct{ k *fakeKernel }

func (f fakeFlows) Total() (int, error) { return 12, nil }

func (f fakeFlows) Counts() (netstate.FlowCounts, error) {
	n := netstate.FlowCounts{Total: 12}
	if f.k.flowtable.FlowtablePresent && len(f.k.flowtable.Devices) > 0 {
		n.Offloaded = 5
		if f.k.flowtable.Hardware {
			n.HWOffloaded = 5
		}
	}
	return n, nil
}
