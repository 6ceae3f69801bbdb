//go:build linux

package engine_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
)

// TestIntegrationCutUDPFlood cuts a UDP flood from the server to the
// client: frames stop reaching the client and the router's stack in both
// directions, the conntrack entry goes, the element lives while the flood
// runs and expires after it stops, and a release restores forwarding.
func TestIntegrationCutUDPFlood(t *testing.T) {
	r := newRig(t, "fpcu", testConfig())
	r.addStackCounters(t)
	ctx := context.Background()
	f := r.startFlow(t, labnet.ClientV4+":40000", labnet.ServerV4+":9000", time.Millisecond, 20000)
	if !waitFor(hang, func() bool { return f.toClient.Load() > 100 }) {
		t.Fatalf("the flood does not reach the client before the cut: %d frames", f.toClient.Load())
	}

	// Frames sent around the cut bound what its counters may count,
	// however long anything takes on a loaded machine.
	serverBefore, clientBefore := f.serverSent.Load(), f.clientSent.Load()
	cuts, err := r.eng.CutAddress(ctx, netip.MustParsePrefix(labnet.ServerV4+"/32"), "test", "test", cut.CutOptions{})
	if err != nil {
		t.Fatalf("CutAddress: %v", err)
	}
	serverAfter := f.serverSent.Load()
	if len(cuts) != 1 || !cuts[0].InFastpath {
		t.Fatalf("cuts = %+v, want one in the fast path", cuts)
	}
	if cuts[0].Reply.Dst != labnet.RouterWANV4 {
		t.Errorf("reply tuple %v: want the NATed destination %s", cuts[0].Reply, labnet.RouterWANV4)
	}
	time.Sleep(100 * time.Millisecond) // frames already past ingress drain
	c0, s0 := r.delivered(t, r.lab.Client), r.delivered(t, r.lab.Server)
	w0, l0 := r.stackFrames(t, "wan0"), r.stackFrames(t, "lan0")
	sent0 := f.serverSent.Load()
	// At least a second, and 300 frames of the flood: a loaded machine
	// sends them later, and none of them may pass.
	time.Sleep(time.Second)
	if !waitFor(hang, func() bool { return f.serverSent.Load()-sent0 >= 300 }) {
		t.Fatalf("the flood sent only %d frames in %v; the test measures nothing", f.serverSent.Load()-sent0, hang)
	}
	sent := f.serverSent.Load() - sent0
	if d := r.delivered(t, r.lab.Client) - c0; d != 0 {
		t.Errorf("%d of %d flood frames reached the client after the cut", d, sent)
	}
	if d := r.delivered(t, r.lab.Server) - s0; d != 0 {
		t.Errorf("%d client frames reached the server after the cut (the reverse direction)", d)
	}
	if d := r.stackFrames(t, "wan0") - w0; d != 0 {
		t.Errorf("%d of %d flood frames reached the router's stack on wan0 after the cut", d, sent)
	}
	if d := r.stackFrames(t, "lan0") - l0; d != 0 {
		t.Errorf("%d client frames reached the router's stack on lan0 after the cut", d)
	}
	t.Logf("cut: %d flood frames sent after it, 0 to the client, 0 to the router's stack", sent)
	if left, err := r.ct.FlowsWithAddress(netip.MustParsePrefix(labnet.ServerV4 + "/32")); err != nil || len(left) != 0 {
		t.Errorf("conntrack still has %+v (%v)", left, err)
	}

	// The element outlives its 2 s expiry while the flood keeps it alive.
	time.Sleep(2500 * time.Millisecond)
	s := r.eng.Summary()
	if s.Active != 1 || len(s.Cuts) != 1 {
		t.Fatalf("after 3.6 s of flood with a 2 s expiry: %d active cuts, want 1 (summary %+v)", s.Active, s)
	}
	c := s.Cuts[0]
	if c.Expires < 1 || c.Trigger != "test" || !c.InFastpath {
		t.Errorf("cut %+v: want expiry refreshed near 2 s, trigger test", c)
	}
	// Counters touch each frame twice; Frames must match what was sent:
	// at least most of the flood sent since the cut, at most every frame
	// of either end sent since just before it.
	serverNow, clientNow := f.serverSent.Load(), f.clientSent.Load()
	if low, high := (serverNow-serverAfter)*8/10, serverNow-serverBefore+clientNow-clientBefore+10; c.Frames < low || c.Frames > high {
		t.Errorf("summary counts %d frames; want %d to %d (the server sent %d, the client %d since just before the cut)", c.Frames, low, high, serverNow-serverBefore, clientNow-clientBefore)
	}

	// Release: the client's next frame makes a new entry and the flood gets through again.
	n, err := r.eng.Release(ctx, func(c cut.Cut) bool { return c.Original.Dst == labnet.ServerV4 })
	if err != nil || n != 1 {
		t.Fatalf("Release = %d, %v; want 1", n, err)
	}
	c1, s1 := f.toClient.Load(), f.toServer.Load()
	if !waitFor(hang, func() bool { return f.toServer.Load() > s1+10 }) {
		t.Errorf("client to server not restored after release: %d frames in 30 s", f.toServer.Load()-s1)
	}
	if !waitFor(hang, func() bool { return f.toClient.Load() > c1+50 }) {
		t.Errorf("server to client not restored after release: %d frames in 30 s", f.toClient.Load()-c1)
	}

	// Cut again, stop all traffic: the cut expires after 2 s.
	// (The flood that hit the router while the flow was released may have
	// left an entry of its own, addressed to the router: it is cut too.)
	again, err := r.eng.CutAddress(ctx, netip.MustParsePrefix(labnet.ServerV4+"/32"), "test", "test", cut.CutOptions{})
	if err != nil || len(again) == 0 {
		t.Fatalf("second cut: %+v, %v", again, err)
	}
	f.stop()
	<-f.done
	if a := r.eng.Summary().Active; a != len(again) {
		t.Fatalf("second cut: %d active, want %d", a, len(again))
	}
	if !waitFor(hang, func() bool { return r.eng.Summary().Active == 0 }) {
		t.Errorf("cut still active 30 s after the traffic stopped, expiry 2 s: %+v", r.eng.Summary().Cuts)
	}
}

// TestIntegrationCutIPv6 does the same cut over IPv6.
func TestIntegrationCutIPv6(t *testing.T) {
	r := newRig(t, "fpc6", testConfig())
	r.addStackCounters(t)
	f := r.startFlow(t, "["+labnet.ClientV6+"]:40006", "["+labnet.ServerV6+"]:9006", time.Millisecond, 10000)
	if !waitFor(hang, func() bool { return f.toClient.Load() > 100 }) {
		t.Fatalf("the IPv6 flood does not reach the client: %d frames", f.toClient.Load())
	}
	cuts, err := r.eng.CutAddress(context.Background(), netip.MustParsePrefix(labnet.ServerV6+"/128"), "test6", "test", cut.CutOptions{})
	if err != nil || len(cuts) != 1 || !cuts[0].InFastpath {
		t.Fatalf("CutAddress(v6) = %+v, %v", cuts, err)
	}
	time.Sleep(100 * time.Millisecond)
	c0, s0, w0 := r.delivered(t, r.lab.Client), r.delivered(t, r.lab.Server), r.stackFrames(t, "wan0")
	sent0 := f.serverSent.Load()
	time.Sleep(time.Second)
	if !waitFor(hang, func() bool { return f.serverSent.Load()-sent0 >= 300 }) {
		t.Fatalf("the IPv6 flood stalled: %d frames in %v", f.serverSent.Load()-sent0, hang)
	}
	if d := r.delivered(t, r.lab.Client) - c0; d != 0 {
		t.Errorf("%d IPv6 flood frames reached the client after the cut", d)
	}
	if d := r.delivered(t, r.lab.Server) - s0; d != 0 {
		t.Errorf("%d IPv6 client frames reached the server after the cut", d)
	}
	if d := r.stackFrames(t, "wan0") - w0; d != 0 {
		t.Errorf("%d IPv6 frames reached the router's stack after the cut", d)
	}
	if s := r.eng.Summary(); s.Active != 1 || s.FramesDropped == 0 {
		t.Errorf("summary %+v", s)
	}
}

// TestIntegrationCutUnrelatedTrafficPasses: traffic of other tuples is
// neither dropped nor added to the sets (the lookup guards the update).
func TestIntegrationCutUnrelatedTrafficPasses(t *testing.T) {
	r := newRig(t, "fpcn", testConfig())
	ctx := context.Background()
	if _, err := r.eng.CutTuple(ctx, cut.Tuple{Proto: "udp", Src: "192.0.2.1", Dst: "192.0.2.2", SrcPort: 1, DstPort: 2}, "unrelated", "test", cut.CutOptions{}); err != nil {
		t.Fatal(err)
	}
	f := r.startFlow(t, labnet.ClientV4+":40010", labnet.ServerV4+":9010", 2*time.Millisecond, 500)
	if !waitFor(hang, func() bool { return f.toClient.Load() >= 400 }) {
		t.Fatalf("unrelated flow hindered: %d frames reached the client", f.toClient.Load())
	}
	s := r.eng.Summary()
	if s.Active != 1 || s.Cuts[0].Frames != 0 {
		t.Errorf("other traffic touched the sets: %+v", s.Cuts)
	}
}

// TestIntegrationCutSetFull: with room for one cut, the second and third
// fall back to conntrack deletion and the summary says why.
func TestIntegrationCutSetFull(t *testing.T) {
	cfg := testConfig()
	cfg.SetSize = 2 // original + reply of one connection
	r := newRig(t, "fpcf", cfg)
	for _, p := range []string{"40020", "40021", "40022"} {
		f := r.startFlow(t, labnet.ClientV4+":"+p, labnet.ServerV4+":90"+p[3:], 5*time.Millisecond, 1)
		if !waitFor(hang, func() bool { return f.toServer.Load() > 0 }) {
			t.Fatal("no traffic")
		}
	}
	cuts, err := r.eng.CutAddress(context.Background(), netip.MustParsePrefix(labnet.ServerV4+"/32"), "full", "test", cut.CutOptions{})
	if err != nil {
		t.Fatalf("CutAddress with a full set: %v", err)
	}
	in := 0
	for _, c := range cuts {
		if c.InFastpath {
			in++
		}
	}
	if len(cuts) != 3 || in != 1 {
		t.Fatalf("cuts %+v: want 3, one in the fast path", cuts)
	}
	s := r.eng.Summary()
	if !strings.Contains(strings.Join(s.Warnings, "\n"), "full") {
		t.Errorf("summary warnings %q do not say the set is full", s.Warnings)
	}
	if s.Active != 1 || len(s.Cuts) != 3 {
		t.Errorf("summary: %d active, %d cuts; want 1 and 3", s.Active, len(s.Cuts))
	}
}

// TestIntegrationCutConntrackOnly: cut_in_fastpath off only deletes the
// conntrack entry and keeps no table.
func TestIntegrationCutConntrackOnly(t *testing.T) {
	cfg := testConfig()
	cfg.InFastpath = false
	r := newRig(t, "fpco", cfg)
	f := r.startFlow(t, labnet.ClientV4+":40030", labnet.ServerV4+":9030", 5*time.Millisecond, 1)
	if !waitFor(hang, func() bool { return f.toServer.Load() > 0 }) {
		t.Fatal("no traffic")
	}
	// Without the fast-path drop the next frame would make a new entry: stop sending first.
	f.stop()
	<-f.done
	time.Sleep(20 * time.Millisecond)
	cuts, err := r.eng.CutAddress(context.Background(), netip.MustParsePrefix(labnet.ServerV4+"/32"), "old", "test", cut.CutOptions{})
	if err != nil || len(cuts) != 1 || cuts[0].InFastpath {
		t.Fatalf("cuts %+v, %v: want one, not in the fast path", cuts, err)
	}
	if out, _ := r.lab.Exec(r.lab.Router, "nft", "list", "tables"); strings.Contains(out, cut.TableName) {
		t.Errorf("table present with cut_in_fastpath off: %s", out)
	}
	left, _ := r.ct.Flows(conntrack.Filter{Proto: "udp"})
	for _, fl := range left {
		if fl.Original.SrcPort == 40030 {
			t.Errorf("conntrack entry still there: %+v", fl)
		}
	}
}
