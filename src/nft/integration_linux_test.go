package nft

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/nftables"

	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/nftevents"
)

// These tests run in a network namespace of their own with veths they
// create. On a kernel without flowtables (CONFIG_NF_FLOW_TABLE) they assert
// that fastpath says so and leaves nothing behind; with
// FASTPATH_EXPECT_FLOWTABLE=1 (the VM lab's kernels) they assert the real
// table, the incremental updates and the hardware refusal.

func expectFlowtable() bool { return os.Getenv("FASTPATH_EXPECT_FLOWTABLE") == "1" }

func newTestBackend(t *testing.T, devs ...string) (*Backend, int) {
	t.Helper()
	fd := newTestNetNS(t)
	addVeths(t, fd, devs...)
	b, err := NewInNetNS(fd)
	if err != nil {
		t.Fatalf("nftables in the test namespace (kernel feature CONFIG_NF_TABLES): %v", err)
	}
	return b, fd
}

// requireNoFlowtable asserts what a kernel without flowtables must give: the
// named error and no table left behind.
func requireNoFlowtable(t *testing.T, b *Backend, res Result, err error) {
	t.Helper()
	if !errors.Is(err, ErrNoFlowtable) {
		t.Fatalf("want ErrNoFlowtable on a kernel without CONFIG_NF_FLOW_TABLE "+
			"(on a kernel with flowtables set FASTPATH_EXPECT_FLOWTABLE=1), got: %v", err)
	}
	for _, word := range []string{"CONFIG_NF_FLOW_TABLE", "nf_flow_table_inet", "kmod-nft-offload"} {
		if !strings.Contains(err.Error(), word) {
			t.Errorf("error does not name %s: %v", word, err)
		}
	}
	if res.Changed {
		t.Errorf("Result.Changed is true after a refused batch: %+v", res)
	}
	k, rerr := b.Read()
	if rerr != nil {
		t.Fatal(rerr)
	}
	if k.TablePresent {
		t.Fatalf("a refused Apply left table inet %s behind: %+v", TableName, k)
	}
}

func mustRead(t *testing.T, b *Backend) netstate.KernelFlowtable {
	t.Helper()
	k, err := b.Read()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestIntegrationApplyIncrementalAndCleanup(t *testing.T) {
	b, fd := newTestBackend(t, "lan0", "wan0", "wan1")
	spec := netstate.FlowtableSpec{Enabled: true, Devices: []string{"wan0", "lan0"}, Counter: true}
	res, err := b.Apply(spec)
	if !expectFlowtable() {
		requireNoFlowtable(t, b, res, err)
		for i := 0; i < 2; i++ {
			if err := b.Cleanup(); err != nil {
				t.Fatalf("Cleanup #%d with no table: %v", i+1, err)
			}
		}
		return
	}
	if err != nil {
		t.Fatalf("first Apply: %v", err)
	}
	if !res.Changed || len(res.Actions) == 0 {
		t.Fatalf("first Apply changed nothing: %+v", res)
	}
	k := mustRead(t, b)
	if !k.TablePresent || !k.FlowtablePresent || !k.ChainPresent || !k.ForwardRule || !k.Counter || k.Hardware ||
		k.Hook != "ingress" || k.Priority != 0 || strings.Join(k.Devices, ",") != "lan0,wan0" {
		t.Fatalf("kernel after first Apply: %+v", k)
	}
	compareWithNft(t, fd, spec)

	res, err = b.Apply(spec)
	if err != nil || res.Changed || len(res.Actions) != 0 {
		t.Fatalf("second Apply of the same spec: %+v, %v; want no change", res, err)
	}

	handle := k.Handle
	spec.Devices = []string{"lan0", "wan0", "wan1"}
	res, err = b.Apply(spec)
	if err != nil || !res.Changed || res.Recreated {
		t.Fatalf("adding wan1: %+v, %v", res, err)
	}
	k = mustRead(t, b)
	if strings.Join(k.Devices, ",") != "lan0,wan0,wan1" || k.Handle != handle {
		t.Fatalf("after adding wan1: devices %v handle %d (was %d): want lan0,wan0,wan1 on the same flowtable", k.Devices, k.Handle, handle)
	}

	spec.Devices = []string{"lan0", "wan1"}
	res, err = b.Apply(spec)
	if err != nil || !res.Changed || res.Recreated {
		t.Fatalf("removing wan0: %+v, %v", res, err)
	}
	k = mustRead(t, b)
	if strings.Join(k.Devices, ",") != "lan0,wan1" || k.Handle != handle {
		t.Fatalf("after removing wan0: devices %v handle %d (was %d): want lan0,wan1 on the same flowtable", k.Devices, k.Handle, handle)
	}
	if res, err := b.Apply(spec); err != nil || res.Changed {
		t.Fatalf("Apply after removal is not idempotent: %+v, %v", res, err)
	}

	// Down to no devices (every interface went away) and back.
	for _, devs := range [][]string{nil, {"lan0", "wan1"}} {
		spec.Devices = devs
		if res, err := b.Apply(spec); err != nil || !res.Changed || res.Recreated {
			t.Fatalf("devices %v: %+v, %v", devs, res, err)
		}
		if k = mustRead(t, b); strings.Join(k.Devices, ",") != strings.Join(devs, ",") || k.Handle != handle {
			t.Fatalf("devices %v: kernel has %v handle %d (was %d)", devs, k.Devices, k.Handle, handle)
		}
	}

	spec.Counter = false
	res, err = b.Apply(spec)
	if err != nil || !res.Recreated {
		t.Fatalf("changing flags: %+v, %v; want a recreated flowtable", res, err)
	}
	// (handles count per table, so the new table's flowtable may get the
	// old number again: Recreated is the evidence)
	if k = mustRead(t, b); k.Counter || !k.FlowtablePresent || !k.ForwardRule || strings.Join(k.Devices, ",") != "lan0,wan1" {
		t.Fatalf("after dropping the counter flag: %+v", k)
	}
	compareWithNft(t, fd, spec)

	for i := 0; i < 2; i++ {
		if err := b.Cleanup(); err != nil {
			t.Fatalf("Cleanup #%d: %v", i+1, err)
		}
	}
	if k := mustRead(t, b); k.TablePresent {
		t.Fatalf("table still present after Cleanup: %+v", k)
	}
}

func TestIntegrationHardwareOnVethIsRefusedCleanly(t *testing.T) {
	b, _ := newTestBackend(t, "lan0", "wan0")
	spec := netstate.FlowtableSpec{Enabled: true, Devices: []string{"lan0", "wan0"}, Hardware: true, Counter: true}
	res, err := b.Apply(spec)
	if !expectFlowtable() {
		requireNoFlowtable(t, b, res, err)
		return
	}
	if !errors.Is(err, ErrHardwareUnsupported) || !res.HardwareRefused {
		t.Fatalf("flags offload on veth: %+v, %v; want ErrHardwareUnsupported and HardwareRefused", res, err)
	}
	if k := mustRead(t, b); k.TablePresent {
		t.Fatalf("refused hardware Apply left a table behind: %+v", k)
	}
	res, err = b.ApplyWithFallback(spec)
	if err != nil || !res.Changed || !res.HardwareRefused {
		t.Fatalf("ApplyWithFallback: %+v, %v", res, err)
	}
	if k := mustRead(t, b); !k.FlowtablePresent || k.Hardware || !k.ForwardRule {
		t.Fatalf("after fallback the kernel has %+v; want a software flowtable", k)
	}
}

func TestIntegrationMissingDeviceIsNamed(t *testing.T) {
	b, _ := newTestBackend(t, "lan0")
	res, err := b.Apply(netstate.FlowtableSpec{Enabled: true, Devices: []string{"lan0", "ghost0"}, Counter: true})
	if !expectFlowtable() {
		// Without flowtables the kernel's ENOENT cannot tell the two
		// apart; either answer names a real problem, and nothing changes.
		var de *DeviceError
		if !errors.Is(err, ErrNoFlowtable) && !(errors.As(err, &de) && de.Device == "ghost0") {
			t.Fatalf("want ErrNoFlowtable or a DeviceError naming ghost0, got %v", err)
		}
		if k := mustRead(t, b); k.TablePresent || res.Changed {
			t.Fatalf("refused Apply changed the kernel: %+v %+v", res, k)
		}
		return
	}
	if err == nil {
		// Linux 6.16+ accepts hooks for devices that do not exist yet.
		t.Log("this kernel accepts a flowtable device that does not exist yet")
		if k := mustRead(t, b); !strings.Contains(strings.Join(k.Devices, ","), "ghost0") {
			t.Fatalf("kernel accepted ghost0 but does not list it: %+v", k)
		}
		return
	}
	var de *DeviceError
	if !errors.As(err, &de) || de.Device != "ghost0" || !errors.Is(err, ErrNoDevice) {
		t.Fatalf("want a DeviceError naming ghost0, got %v", err)
	}
}

// A foreign delete of our table reaches Watch; our own batches do not.
func TestIntegrationWatchSeesForeignDelete(t *testing.T) {
	nftPath, err := exec.LookPath("nft")
	if err != nil {
		t.Skip("needs the nft command to make a foreign change")
	}
	b, fd := newTestBackend(t, "lan0")
	ctx, cancel := context.WithCancel(context.Background())
	hub, err := nftevents.Open(fd)
	if err != nil {
		t.Fatal(err)
	}
	go hub.Run(ctx)
	b.UseEvents(hub)
	var calls atomic.Int32
	done := make(chan error, 1)
	go func() { done <- b.Watch(ctx, func() { calls.Add(1) }) }()
	// The hub's socket is in the group since Open; once Watch has
	// subscribed it sees every later change.
	for subscribed := time.Now().Add(30 * time.Second); hub.Subscribers() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(subscribed) {
			t.Fatal("Watch did not subscribe to the nftables events within 30 s")
		}
	}

	// Our own change: a table with a chain (no flowtable, so this runs on
	// every kernel) made by this process.
	bt := &batch{}
	if err := bt.add(func(c *nftables.Conn) error { c.AddTable(ourTable()); c.AddChain(ourChain()); return nil }); err != nil {
		t.Fatal(err)
	}
	conn, err := b.dialNetlink()
	if err != nil {
		t.Fatal(err)
	}
	errs, err := bt.send(conn)
	conn.Close()
	if _, kerr := firstError(errs); err != nil || kerr != nil {
		t.Fatalf("creating the table: %v %v", err, kerr)
	}

	inNetNS(t, fd, func() {
		if out, err := exec.Command(nftPath, "delete", "table", "inet", TableName).CombinedOutput(); err != nil {
			t.Errorf("nft delete table: %v: %s", err, out)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for calls.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	// A right watcher calls exactly once however late the events come;
	// the pause only gives a wrong one (one counting our own create) the
	// time to show it.
	time.Sleep(200 * time.Millisecond)
	if n := calls.Load(); n != 1 {
		t.Fatalf("changed() called %d times; want exactly 1 (the foreign delete, not our own create)", n)
	}
	if expectFlowtable() {
		// A flowtable change alone: google/nftables does not decode
		// flowtable events, Watch must still report the generation.
		if _, err := b.Apply(netstate.FlowtableSpec{Enabled: true, Devices: []string{"lan0"}, Counter: true}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		calls.Store(0)
		addVeths(t, fd, "wan0")
		inNetNS(t, fd, func() {
			if out, err := exec.Command(nftPath, "add", "flowtable", "inet", TableName, FlowtableName,
				"{ hook ingress priority filter; devices = { wan0 }; counter; }").CombinedOutput(); err != nil {
				t.Errorf("nft add flowtable devices: %v: %s", err, out)
			}
		})
		deadline := time.Now().Add(30 * time.Second)
		for calls.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if calls.Load() == 0 {
			t.Fatal("a foreign device added to our flowtable was not reported")
		}
		if res, err := b.Apply(netstate.FlowtableSpec{Enabled: true, Devices: []string{"lan0"}, Counter: true}); err != nil || !res.Changed {
			t.Fatalf("repairing the foreign device: %+v, %v", res, err)
		}
		if k := mustRead(t, b); strings.Join(k.Devices, ",") != "lan0" {
			t.Fatalf("after repair the flowtable has %v", k.Devices)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Watch returned %v after cancel; want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not return after its context ended")
	}
}

// compareWithNft checks that `nft list table inet fastpath` shows what Render
// says, modulo whitespace, quotes and semicolons (nft versions differ there).
func compareWithNft(t *testing.T, fd int, spec netstate.FlowtableSpec) {
	t.Helper()
	nftPath, err := exec.LookPath("nft")
	if err != nil {
		t.Log("nft command not found: skipping the text comparison")
		return
	}
	var out []byte
	inNetNS(t, fd, func() {
		out, err = exec.Command(nftPath, "list", "table", "inet", TableName).CombinedOutput()
	})
	if err != nil {
		t.Fatalf("nft list table: %v: %s", err, out)
	}
	if got, want := normalizeNft(string(out)), normalizeNft(Render(spec)); got != want {
		t.Fatalf("nft lists\n%s\nRender says\n%s", out, Render(spec))
	}
}

var nftNoise = regexp.MustCompile(`[\s;"]+`)

func normalizeNft(s string) string {
	return strings.TrimSpace(nftNoise.ReplaceAllString(s, " "))
}

// TestIntegrationAnyFlowtable: a namespace without a flowtable has none,
// whatever tables it holds; a foreign one (fw4's) counts as much as ours.
func TestIntegrationAnyFlowtable(t *testing.T) {
	b, fd := newTestBackend(t, "ftv0")
	if has, err := b.AnyFlowtable(); err != nil || has {
		t.Fatalf("empty namespace: any flowtable %v, %v", has, err)
	}
	c, err := nftables.New(nftables.WithNetNSFd(fd))
	if err != nil {
		t.Fatal(err)
	}
	foreign := c.AddTable(&nftables.Table{Family: nftables.TableFamilyINet, Name: "fw4"})
	c.AddTable(&nftables.Table{Family: nftables.TableFamilyNetdev, Name: "other"})
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if has, err := b.AnyFlowtable(); err != nil || has {
		t.Fatalf("tables without flowtables: any flowtable %v, %v", has, err)
	}
	if !expectFlowtable() {
		return // this kernel cannot hold one (CONFIG_NF_FLOW_TABLE)
	}
	c.AddFlowtable(&nftables.Flowtable{Table: foreign, Name: "ft", Hooknum: nftables.FlowtableHookIngress,
		Priority: nftables.FlowtablePriorityRef(0), Devices: []string{"ftv0"}})
	if err := c.Flush(); err != nil {
		t.Fatalf("add fw4's flowtable: %v", err)
	}
	if has, err := b.AnyFlowtable(); err != nil || !has {
		t.Fatalf("fw4's flowtable not seen: %v, %v", has, err)
	}
}
