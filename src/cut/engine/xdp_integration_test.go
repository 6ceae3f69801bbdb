//go:build linux

package engine_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/cut/engine"
	"github.com/fastpath-wrt/fastpath/src/cut/xdp"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
)

// xdpRig is a rig whose router cuts with cut_backend xdp on its veths
// (native XDP) and on a bridge, which has no native XDP (no ndo_bpf).
// With auto first, the veths keep the netdev cut, with the reason.
func xdpRig(t *testing.T, prefix string, cfg cut.Config) (*rig, cut.Config) {
	t.Helper()
	cfg.Backend = cut.BackendAuto
	r := newRig(t, prefix, cfg)
	if _, err := r.lab.Exec(r.lab.Router, "ip", "link", "add", "br9", "up", "type", "bridge"); err != nil {
		t.Fatalf("bridge device (CONFIG_BRIDGE): %v", err)
	}
	if err := r.eng.Sync([]string{"lan0", "wan0", "br9"}, cfg); err != nil {
		t.Fatal(err)
	}
	for _, b := range r.eng.Summary().Backends {
		if b.Backend != cut.BackendNetdev || b.Device != "br9" && !strings.Contains(b.Reason, "is a veth") {
			t.Fatalf("cut_backend auto: %s cuts with %s (%s), want netdev (a veth gains nothing from XDP)", b.Device, b.Backend, b.Reason)
		}
	}
	if got := r.xdpProgs(t); got != "" {
		t.Fatalf("cut_backend auto: XDP attached on %q, want on no veth", got)
	}
	cfg.Backend = cut.BackendXDP
	if err := r.eng.Sync([]string{"lan0", "wan0", "br9"}, cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"lan0": cut.BackendXDP, "wan0": cut.BackendXDP, "br9": cut.BackendNetdev}
	s := r.eng.Summary()
	for _, b := range s.Backends {
		if want[b.Device] != b.Backend {
			t.Fatalf("device %s cuts with %s (%s), want %s; all: %+v", b.Device, b.Backend, b.Reason, want[b.Device], s.Backends)
		}
		delete(want, b.Device)
		if b.Device == "br9" && !strings.Contains(b.Reason, "no native XDP") {
			t.Errorf("br9's reason %q does not say its driver lacks native XDP", b.Reason)
		}
	}
	if len(want) > 0 {
		t.Fatalf("no backend reported for %v: %+v", want, s.Backends)
	}
	return r, cfg
}

// xdpProgs lists the devices of the router namespace with an XDP program
// attached, as ip link shows them.
func (r *rig) xdpProgs(t *testing.T) string {
	t.Helper()
	out, err := r.lab.Exec(r.lab.Router, "ip", "-o", "link", "show")
	if err != nil {
		t.Fatal(err)
	}
	var on []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.Contains(l, "xdp") {
			on = append(on, strings.TrimSuffix(strings.SplitN(f[1], "@", 2)[0], ":"))
		}
	}
	return strings.Join(on, ",")
}

// The XDP cut holds both directions while both ends keep sending, no
// ingress chain is hooked on the XDP devices (only on br9), a release
// brings the flow back, a cut nobody sends to expires after cut_expiry,
// and Cleanup leaves no program attached.
func TestIntegrationXDPCutHoldsReleasesExpires(t *testing.T) {
	// The XDP devices' frames never refresh the netdev sets' elements, so
	// br9's chain lives for one cut_expiry after the cut (then the idle
	// check detaches it, as it should): long enough here for a slow VM to
	// look at it, against the 2 s the other tests use.
	cfg := testConfig()
	cfg.Expiry = hang
	r, cfg := xdpRig(t, "fpxc", cfg)
	if got := r.xdpProgs(t); got != "lan0,wan0" {
		t.Fatalf("XDP attached on %q, want lan0,wan0", got)
	}
	ctx := context.Background()
	f := r.startFlow(t, labnet.ClientV4+":40091", labnet.ServerV4+":9091", time.Millisecond, 10_000_000)
	if !waitFor(10*time.Second, func() bool { return f.toClient.Load() > 100 && f.toServer.Load() > 10 }) {
		t.Fatalf("the flow does not run: %d frames to the client, %d to the server", f.toClient.Load(), f.toServer.Load())
	}
	server := netip.MustParsePrefix(labnet.ServerV4 + "/32")
	ofServer := func(c cut.Cut) bool { return c.HasAddressIn(server) }
	cuts, err := r.eng.CutAddress(ctx, server, "test", "test", cut.CutOptions{})
	if err != nil || len(cuts) == 0 {
		t.Fatalf("CutAddress = %v, %v", cuts, err)
	}
	// Frames in flight when the cut went in may still arrive: count from
	// the first frame the program drops.
	frames := func() uint64 {
		var n uint64
		for _, c := range r.eng.Summary().Cuts {
			if ofServer(c) {
				n += c.Frames
			}
		}
		return n
	}
	if !waitFor(10*time.Second, func() bool { return frames() > 0 }) {
		t.Fatal("the XDP program drops no frame of the cut flow")
	}
	// What each end's kernel delivered to its sockets, not what the test's
	// readers have read yet: on a loaded machine a reader may still be
	// reading frames that arrived before the cut.
	c0, s0 := r.delivered(t, r.lab.Client), r.delivered(t, r.lab.Server)
	if !waitFor(30*time.Second, func() bool { return frames() > 500 }) {
		t.Fatalf("the cut dropped only %d frames", frames())
	}
	if dc, ds := r.delivered(t, r.lab.Client)-c0, r.delivered(t, r.lab.Server)-s0; dc != 0 || ds != 0 {
		t.Fatalf("while cut, %d frames reached the client and %d the server", dc, ds)
	}
	sum := r.eng.Summary()
	for _, c := range sum.Cuts {
		if ofServer(c) && (!c.InFastpath || c.Expires <= 0) {
			t.Fatalf("cut %+v: want in the fast path with time left", c)
		}
	}
	chains, err := r.lab.Exec(r.lab.Router, "nft", "list", "chains", "netdev")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(chains, "in_lan0") || strings.Contains(chains, "in_wan0") {
		t.Fatalf("an ingress chain is hooked on an XDP device:\n%s", chains)
	}
	if !strings.Contains(chains, "in_br9") {
		t.Fatalf("no ingress chain on br9, the device without XDP:\n%s", chains)
	}

	n, err := r.eng.Release(ctx, ofServer)
	if err != nil || n == 0 {
		t.Fatalf("Release = %d, %v", n, err)
	}
	c1 := f.toClient.Load()
	if !waitFor(10*time.Second, func() bool { return f.toClient.Load() > c1+100 }) {
		t.Fatal("forwarding not restored after the release")
	}

	// Expiry: a tuple no frame keeps alive leaves the map after cut_expiry,
	// a short one now.
	cfg.Expiry = testConfig().Expiry
	if err := r.eng.Sync([]string{"lan0", "wan0", "br9"}, cfg); err != nil {
		t.Fatal(err)
	}
	quiet := cut.Tuple{Proto: "udp", Src: "192.0.2.7", Dst: "192.0.2.8", SrcPort: 7, DstPort: 8}
	if _, err := r.eng.CutTuple(ctx, quiet, "test", "test", cut.CutOptions{}); err != nil {
		t.Fatal(err)
	}
	isCut := func() bool {
		for _, c := range r.eng.Summary().Cuts {
			if c.Original.Equal(quiet) {
				return true
			}
		}
		return false
	}
	if !isCut() {
		t.Fatal("the quiet tuple is not listed right after its cut")
	}
	if !waitFor(cfg.Expiry+20*time.Second, func() bool { return !isCut() }) {
		t.Fatalf("the quiet tuple is still cut %v after its cut (cut_expiry %v)", cfg.Expiry+20*time.Second, cfg.Expiry)
	}
	if err := r.eng.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if got := r.xdpProgs(t); got != "" {
		t.Fatalf("XDP still attached on %q after Cleanup", got)
	}
}

// The same for IPv6 and for a flow tagged with a VLAN below the router's
// L3 device: the program runs on the VLAN's parent and parses the tag.
func TestIntegrationXDPCutIPv6AndVLAN(t *testing.T) {
	r, _ := xdpRig(t, "fpx6", testConfig())
	ctx := context.Background()
	for _, tc := range []struct{ name, client, server, route string }{
		{"IPv6", "[" + labnet.ClientV6 + "]:40092", "[" + labnet.ServerV6 + "]:9092", ""},
		// From here the client reaches the server over the VLAN.
		{"VLAN", "[fd07::2]:40093", "[" + labnet.ServerV6 + "]:9093", labnet.ServerV6 + "/128 via fd07::1 dev c0.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.route != "" {
				// A VLAN 7 between client and router with its own subnet;
				// the router's L3 device is lan0.7, the program runs on lan0.
				if _, err := r.lab.Exec(r.lab.Router, "ip", "link", "add", "link", "lan0", "name", "lan0.7", "type", "vlan", "id", "7"); err != nil {
					if strings.Contains(err.Error(), "Unknown device type") {
						t.Skip("needs 802.1Q VLAN devices (CONFIG_VLAN_8021Q); the lab VM has them")
					}
					t.Fatal(err)
				}
				for _, c := range []struct{ ns, script string }{
					{r.lab.Router, "ip link set lan0.7 up && ip -6 addr add fd07::1/64 dev lan0.7 nodad"},
					{r.lab.Client, "ip link add link c0 name c0.7 type vlan id 7 && ip link set c0.7 up && ip -6 addr add fd07::2/64 dev c0.7 nodad && ip -6 route add " + tc.route},
				} {
					if _, err := r.lab.Exec(c.ns, "sh", "-c", c.script); err != nil {
						t.Fatalf("VLAN set-up: %v", err)
					}
				}
			}
			f := r.startFlow(t, tc.client, tc.server, time.Millisecond, 10_000_000)
			if !waitFor(10*time.Second, func() bool { return f.toClient.Load() > 100 }) {
				t.Fatalf("the flow does not run: %d frames to the client", f.toClient.Load())
			}
			p := netip.PrefixFrom(netip.MustParseAddrPort(tc.client).Addr(), 128)
			of := func(c cut.Cut) bool { return c.HasAddressIn(p) }
			if cuts, err := r.eng.CutAddress(ctx, p, "test", "test", cut.CutOptions{}); err != nil || len(cuts) == 0 {
				t.Fatalf("CutAddress(%s) = %v, %v", p, cuts, err)
			}
			frames := func() (n uint64) {
				for _, c := range r.eng.Summary().Cuts {
					if of(c) {
						n += c.Frames
					}
				}
				return n
			}
			if !waitFor(10*time.Second, func() bool { return frames() > 0 }) {
				t.Fatal("the XDP program drops no frame of the cut flow")
			}
			c0 := f.toClient.Load()
			if !waitFor(30*time.Second, func() bool { return frames() > 300 }) {
				t.Fatalf("the cut dropped only %d frames", frames())
			}
			if d := f.toClient.Load() - c0; d != 0 {
				t.Fatalf("while cut, %d frames reached the client", d)
			}
			if n, err := r.eng.Release(ctx, of); err != nil || n == 0 {
				t.Fatalf("Release = %d, %v", n, err)
			}
			c1 := f.toClient.Load()
			if !waitFor(10*time.Second, func() bool { return f.toClient.Load() > c1+100 }) {
				t.Fatal("forwarding not restored after the release")
			}
			f.closeSockets()
		})
	}
}

// Release under a flood: the program never inserts a key, so no frame in
// flight can bring a released tuple back; each round checks forwarding
// returns while the flood runs at full rate.
func TestIntegrationXDPReleaseUnderFlood(t *testing.T) {
	const rounds = 60
	r, _ := xdpRig(t, "fpxf", testConfig())
	ctx := context.Background()
	f := r.startFlow(t, labnet.ClientV4+":40094", labnet.ServerV4+":9094", time.Microsecond, 100_000_000)
	if !waitFor(10*time.Second, func() bool { return f.toClient.Load() > 500 }) {
		t.Fatalf("the flood does not reach the client: %d frames", f.toClient.Load())
	}
	server := netip.MustParsePrefix(labnet.ServerV4 + "/32")
	ofServer := func(c cut.Cut) bool { return c.HasAddressIn(server) }
	for i := 0; i < rounds && f.serverSent.Load() < 100_000_000; i++ {
		r.cutFlood(t, i, server, "flood")
		if !waitFor(10*time.Second, func() bool {
			for _, c := range r.eng.Summary().Cuts {
				if ofServer(c) && c.Frames > 0 {
					return true
				}
			}
			return false
		}) {
			t.Fatalf("round %d: the cut drops no flood frame: the test would measure nothing", i)
		}
		if n, err := r.eng.Release(ctx, ofServer); err != nil || n == 0 {
			t.Fatalf("round %d: Release = %d, %v", i, n, err)
		}
		for _, c := range r.eng.Summary().Cuts {
			if ofServer(c) {
				t.Fatalf("round %d: release undone: %+v is cut again", i, c)
			}
		}
		c1 := f.toClient.Load()
		if !waitFor(10*time.Second, func() bool { return f.toClient.Load() > c1+100 }) {
			if f.serverSent.Load() >= 100_000_000 || !floodRuns(f) {
				t.Fatalf("round %d: the flood ended before the test did", i)
			}
			t.Fatalf("round %d: forwarding not restored after the release: %s", i, fmt.Sprint(f.toClient.Load()-c1))
		}
	}
}

// floodRuns tells a flood that still sends from one that ended.
func floodRuns(f *flow) bool {
	select {
	case <-f.done:
		return false
	default:
		return true
	}
}

// A daemon that died with its program attached (kill -9): the next run
// takes the program over with the cuts in its map, and `fastpath daemon
// --cleanup` (an engine that never synced) detaches what is left.
func TestIntegrationXDPLeftoversTakenOverAndCleanedUp(t *testing.T) {
	cfg := testConfig()
	cfg.Backend = cut.BackendXDP
	r := newRig(t, "fpxl", cut.Config{Enabled: true, InFastpath: true, Expiry: 30 * time.Second, SetSize: 1024, Backend: cut.BackendNetdev})
	left := cut.Tuple{Proto: "udp", Src: "192.0.2.9", Dst: "192.0.2.10", SrcPort: 9, DstPort: 10}
	err := labnet.In(r.lab.Router, func() error {
		b, err := xdp.Open(xdp.Options{MaxEntries: 64, Veth: true})
		if err != nil {
			return err
		}
		for _, d := range []string{"lan0", "wan0"} {
			if a := b.Attach(d); !a.XDP {
				return fmt.Errorf("attach %s: %s", d, a.Reason)
			}
		}
		if err := b.Cut([]cut.Tuple{left}); err != nil {
			return err
		}
		return b.Leave() // as a killed daemon would
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.xdpProgs(t); got != "lan0,wan0" {
		t.Fatalf("the earlier run's program is on %q, want lan0,wan0", got)
	}
	cfg.Expiry = 30 * time.Second
	if err := r.eng.Sync([]string{"lan0", "wan0"}, cfg); err != nil {
		t.Fatal(err)
	}
	for _, b := range r.eng.Summary().Backends {
		if b.Backend != cut.BackendXDP {
			t.Fatalf("%s: %s (%s): the earlier run's program was not taken over", b.Device, b.Backend, b.Reason)
		}
	}
	found := false
	for _, c := range r.eng.Summary().Cuts {
		found = found || c.Original.Equal(left)
	}
	if !found {
		t.Fatalf("the earlier run's cut %s was not carried over: %+v", left, r.eng.Summary().Cuts)
	}
	// Killed again (r.eng is never closed); the cleanup of a fresh engine,
	// as `fastpath daemon --cleanup` runs it, leaves no program of ours.
	var fresh *engine.Engine
	err = labnet.In(r.lab.Router, func() (err error) {
		fresh, err = engine.NewEngine(r.ct, nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if got := r.xdpProgs(t); got != "" {
		t.Fatalf("XDP still attached on %q after the cleanup", got)
	}
}

// cut_backend turned to netdev while a flood is cut in XDP: the flood's
// set elements expired long ago (no chain refreshed them), and the cut
// holds anyway, now in the ingress chains.
func TestIntegrationXDPToNetdevKeepsCuts(t *testing.T) {
	r, cfg := xdpRig(t, "fpxn", testConfig())
	ctx := context.Background()
	f := r.startFlow(t, labnet.ClientV4+":40095", labnet.ServerV4+":9095", time.Millisecond, 10_000_000)
	if !waitFor(10*time.Second, func() bool { return f.toClient.Load() > 100 }) {
		t.Fatalf("the flow does not run: %d frames to the client", f.toClient.Load())
	}
	server := netip.MustParsePrefix(labnet.ServerV4 + "/32")
	if cuts, err := r.eng.CutAddress(ctx, server, "test", "test", cut.CutOptions{}); err != nil || len(cuts) == 0 {
		t.Fatalf("CutAddress = %v, %v", cuts, err)
	}
	if !waitFor(10*time.Second, func() bool { return len(r.elementsOf(t, cut.SetName4, labnet.ServerV4)) == 0 }) {
		t.Fatal("the cut's set elements do not expire while XDP drops the flood")
	}
	c0 := f.toClient.Load()
	cfg.Backend = cut.BackendNetdev
	if err := r.eng.Sync([]string{"lan0", "wan0", "br9"}, cfg); err != nil {
		t.Fatal(err)
	}
	if got := r.xdpProgs(t); got != "" {
		t.Fatalf("XDP still attached on %q with cut_backend netdev", got)
	}
	if len(r.elementsOf(t, cut.SetName4, labnet.ServerV4)) == 0 {
		t.Fatal("the XDP map's cut did not go back into the cut set")
	}
	// The flood keeps the element alive from now on: after three expiries
	// it is still there and nothing reached the client.
	time.Sleep(3 * cfg.Expiry)
	if n := len(r.elementsOf(t, cut.SetName4, labnet.ServerV4)); n == 0 {
		t.Fatal("the cut expired in the netdev table while the flood went on")
	}
	if d := f.toClient.Load() - c0; d != 0 {
		t.Fatalf("%d flood frames reached the client across the switch to netdev", d)
	}
}

// A new cut_set_size needs a new map and program: it replaces the old one
// on each device, the cuts carried over (the netdev sets, re-created for
// the new size, start empty).
func TestIntegrationXDPNewSetSizeKeepsCuts(t *testing.T) {
	r, cfg := xdpRig(t, "fpxz", testConfig())
	ctx := context.Background()
	held := cut.Tuple{Proto: "tcp", Src: "192.0.2.11", Dst: "192.0.2.12", SrcPort: 11, DstPort: 12}
	cfg.Expiry = time.Minute
	if err := r.eng.Sync([]string{"lan0", "wan0", "br9"}, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := r.eng.CutTuple(ctx, held, "test", "test", cut.CutOptions{}); err != nil {
		t.Fatal(err)
	}
	progs := func() string {
		out, err := r.lab.Exec(r.lab.Router, "ip", "-d", "link", "show", "wan0")
		if err != nil {
			t.Fatal(err)
		}
		return out[strings.Index(out, "prog/xdp"):][:20]
	}
	before := progs()
	cfg.SetSize = 4096
	if err := r.eng.Sync([]string{"lan0", "wan0", "br9"}, cfg); err != nil {
		t.Fatal(err)
	}
	if after := progs(); after == before {
		t.Fatalf("wan0 still runs %q after the map's size changed", after)
	}
	if got := r.xdpProgs(t); got != "lan0,wan0" {
		t.Fatalf("XDP attached on %q, want lan0,wan0", got)
	}
	for _, c := range r.eng.Summary().Cuts {
		if c.Original.Equal(held) && c.InFastpath {
			return
		}
	}
	t.Fatalf("the cut of %s did not survive the new cut_set_size: %+v", held, r.eng.Summary().Cuts)
}

// xdp_forward reopens the XDP program with the forward stage: the summary
// says where it forwards (a kernel with bpf_xdp_flow_lookup and BTF) or why
// not, the cut keeps running in XDP either way, and turning the option off
// drops the summary's part.
func TestIntegrationXDPForwardSetting(t *testing.T) {
	r, cfg := xdpRig(t, "fpxf", testConfig())
	cfg.XDPForward = true
	if err := r.eng.Sync([]string{"lan0", "wan0", "br9"}, cfg); err != nil {
		t.Fatal(err)
	}
	s := r.eng.Summary()
	f := s.XDPForward
	if f == nil {
		t.Fatal("xdp_forward on: the summary has no xdp_forward")
	}
	t.Logf("xdp_forward: %+v", *f)
	switch {
	case f.Active && !slices.Equal(f.Devices, []string{"lan0", "wan0"}):
		t.Errorf("forwarding on %v, want lan0 and wan0 (br9 has no native XDP)", f.Devices)
	case !f.Active && !strings.Contains(f.Reason, "cuts only"):
		t.Errorf("not forwarding, reason %q: want what the kernel lacks", f.Reason)
	case os.Getenv("FASTPATH_EXPECT_FLOWTABLE") == "1" && !f.Active:
		t.Errorf("a flowtable kernel does not forward: %s", f.Reason)
	}
	for _, b := range s.Backends {
		if b.Device != "br9" && b.Backend != cut.BackendXDP {
			t.Errorf("with xdp_forward, %s cuts with %s (%s), want xdp", b.Device, b.Backend, b.Reason)
		}
	}
	if got := r.xdpProgs(t); !strings.Contains(got, "lan0") || !strings.Contains(got, "wan0") {
		t.Errorf("XDP attached on %q, want lan0 and wan0", got)
	}
	f0 := r.startFlow(t, labnet.ClientV4+":40096", labnet.ServerV4+":9096", time.Millisecond, 10_000_000)
	if !waitFor(10*time.Second, func() bool { return f0.toClient.Load() > 100 }) {
		t.Fatalf("the flow does not run: %d frames to the client", f0.toClient.Load())
	}
	server := netip.MustParsePrefix(labnet.ServerV4 + "/32")
	if cuts, err := r.eng.CutAddress(context.Background(), server, "test", "test", cut.CutOptions{}); err != nil || len(cuts) == 0 {
		t.Fatalf("CutAddress = %v, %v", cuts, err)
	}
	time.Sleep(500 * time.Millisecond) // frames in flight at the cut
	c0 := f0.toClient.Load()
	time.Sleep(2 * time.Second)
	if d := f0.toClient.Load() - c0; d != 0 {
		t.Errorf("%d flood frames reached the client through the cut with xdp_forward on", d)
	}
	cfg.XDPForward = false
	if err := r.eng.Sync([]string{"lan0", "wan0", "br9"}, cfg); err != nil {
		t.Fatal(err)
	}
	if f := r.eng.Summary().XDPForward; f != nil {
		t.Errorf("xdp_forward off: the summary still has %+v", *f)
	}
	if got := r.xdpProgs(t); !strings.Contains(got, "lan0") {
		t.Errorf("xdp_forward off: XDP attached on %q, want the cut's program on lan0 and wan0", got)
	}
}
