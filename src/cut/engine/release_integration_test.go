//go:build linux

package engine_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/cut/engine"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"github.com/google/nftables"
)

// elementsOf reads a set of the cut table in the router's namespace and
// returns the tuples of its elements that have an end at addr. A set that
// is not there reads as empty.
func (r *rig) elementsOf(t *testing.T, set, addr string) map[cut.Tuple]bool {
	t.Helper()
	out := map[cut.Tuple]bool{}
	err := labnet.In(r.lab.Router, func() error {
		c, err := nftables.New()
		if err != nil {
			return err
		}
		s, err := c.GetSetByName(&nftables.Table{Family: nftables.TableFamilyNetdev, Name: cut.TableName}, set)
		if err != nil {
			return nil
		}
		els, err := c.GetSetElements(s)
		if err != nil {
			return err
		}
		for _, el := range els {
			if tu, err := cut.DecodeKey(el.Key); err == nil && (tu.Src == addr || tu.Dst == addr) {
				out[tu] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read set %s: %v", set, err)
	}
	return out
}

// TestIntegrationReleaseUnderFlood cuts and releases the flow of a flood
// hundreds of times while the server sends as fast as it can, so frames
// are always in flight through the cut rule when a release commits. The
// property: no release is ever undone. Right after each release every
// element of the flow still in the cut set carries a released mark (a
// frame in flight may re-add one, which then drops nothing), the summary
// counts no cut of the flow, and forwarding comes back; once the marks
// have expired, the flood, still running, has kept no element alive. An
// unrelated cut keeps the chains attached throughout, so only the release
// itself can restore forwarding.
func TestIntegrationReleaseUnderFlood(t *testing.T) {
	const rounds = 300
	cfg := testConfig() // 2 s expiry: the marks are gone 4 s after the last release
	r := newRig(t, "fprf", cfg)
	ctx := context.Background()
	other := cut.Tuple{Proto: "udp", Src: "192.0.2.1", Dst: "192.0.2.2", SrcPort: 1, DstPort: 2}
	if _, err := r.eng.CutTuple(ctx, other, "keeps the chains", "test", cut.CutOptions{}); err != nil {
		t.Fatal(err)
	}
	// As fast as the server can send (a frame per microsecond asked, more
	// than this machine sends) until the rounds end, however long a loaded
	// machine makes them: a billion frames is beyond any run's reach.
	f := r.startFlow(t, labnet.ClientV4+":40090", labnet.ServerV4+":9090", time.Microsecond, 1_000_000_000)
	if !waitFor(hang, func() bool { return f.toClient.Load() > 500 }) {
		t.Fatalf("the flood does not reach the client: %d frames", f.toClient.Load())
	}
	server := netip.MustParsePrefix(labnet.ServerV4 + "/32")
	ofServer := func(c cut.Cut) bool { return c.HasAddressIn(server) }
	start, reAdded := time.Now(), 0
	for i := 0; i < rounds; i++ {
		if _, err := r.eng.CutTuple(ctx, other, "keeps the chains", "test", cut.CutOptions{}); err != nil { // it has no frames to keep it
			t.Fatal(err)
		}
		r.cutFlood(t, i, server, "flood")
		// The flood must be hitting the rule when the release commits.
		if !waitFor(hang, func() bool {
			for _, c := range r.eng.Summary().Cuts {
				if ofServer(c) && c.Frames > 0 {
					return true
				}
			}
			return false
		}) {
			t.Fatalf("round %d: the cut drops no flood frame: the test would measure nothing", i)
		}
		n, err := r.eng.Release(ctx, ofServer)
		if err != nil || n == 0 {
			t.Fatalf("round %d: Release = %d, %v", i, n, err)
		}
		marked := r.elementsOf(t, cut.ReleasedName4, labnet.ServerV4)
		for tu := range r.elementsOf(t, cut.SetName4, labnet.ServerV4) {
			if !marked[tu] {
				t.Fatalf("round %d: release undone: %s is back in %s without a released mark", i, tu, cut.SetName4)
			}
			reAdded++
		}
		for _, c := range r.eng.Summary().Cuts {
			if ofServer(c) {
				t.Fatalf("round %d: the summary still counts %+v after its release", i, c)
			}
		}
		c1 := f.toClient.Load()
		if !waitFor(hang, func() bool { return f.toClient.Load() > c1+100 }) {
			t.Fatalf("round %d: forwarding not restored 30 s after the release: %d frames to the client", i, f.toClient.Load()-c1)
		}
	}
	t.Logf("%d cut/release rounds under a flood of %d frames in %v; frames in flight re-added %d released element(s), each harmless",
		rounds, f.serverSent.Load(), time.Since(start).Round(10*time.Millisecond), reAdded)
	// Re-added elements are never refreshed: they and their marks expire
	// while the flood goes on.
	wait := cut.ReleasedTimeout(cfg.Expiry) + 5*time.Second
	if !waitFor(wait, func() bool {
		return len(r.elementsOf(t, cut.SetName4, labnet.ServerV4)) == 0 && len(r.elementsOf(t, cut.ReleasedName4, labnet.ServerV4)) == 0
	}) {
		t.Fatalf("%v after the last release the flood keeps %v in %s", wait, r.elementsOf(t, cut.SetName4, labnet.ServerV4), cut.SetName4)
	}
	c1 := f.toClient.Load()
	if !waitFor(hang, func() bool { return f.toClient.Load() > c1+100 }) {
		t.Fatal("forwarding stopped after the marks expired")
	}
	if f.serverSent.Load() >= 1_000_000_000 {
		t.Fatal("the flood ran out of frames before the end")
	}
	for _, c := range r.eng.Summary().Cuts {
		if ofServer(c) {
			t.Errorf("after the rounds the summary counts %+v", c)
		}
	}
}

// TestIntegrationReleaseReAdded: an element put back in the cut set right
// after its release (what a frame in flight does in its update) is not
// counted, drops nothing, is not refreshed, and lets the chains go; a new
// cut of the same tuple clears the mark and cuts again.
func TestIntegrationReleaseReAdded(t *testing.T) {
	cfg := testConfig()
	r := newRig(t, "fpra", cfg)
	ctx := context.Background()
	f := r.startFlow(t, labnet.ClientV4+":40091", labnet.ServerV4+":9091", 100*time.Microsecond, 1_000_000)
	if !waitFor(hang, func() bool { return f.toClient.Load() > 100 }) {
		t.Fatalf("the flow does not reach the client: %d frames", f.toClient.Load())
	}
	server := netip.MustParsePrefix(labnet.ServerV4 + "/32")
	all := func(cut.Cut) bool { return true }
	if cuts, err := r.eng.CutAddress(ctx, server, "once", "test", cut.CutOptions{}); err != nil || len(cuts) == 0 {
		t.Fatalf("CutAddress = %v, %v", cuts, err)
	}
	engine.ReAddAfterRelease(r.eng)
	if n, err := r.eng.Release(ctx, all); err != nil || n != 1 {
		t.Fatalf("Release with a re-add = %d, %v; want 1, nil", n, err)
	}
	if len(r.elementsOf(t, cut.SetName4, labnet.ServerV4)) == 0 {
		t.Fatal("the test hook re-added nothing")
	}
	if s := r.eng.Summary(); s.Active != 0 {
		t.Errorf("a re-added element counts as a cut: %+v", s.Cuts)
	}
	if c := r.chainsOf(t); len(c) != 0 {
		t.Errorf("chains %v after the last cut was released", c)
	}
	c1 := f.toClient.Load()
	if !waitFor(hang, func() bool { return f.toClient.Load() > c1+100 }) {
		t.Fatal("forwarding not restored after the release")
	}
	// A new cut of the flow while its mark is in place cuts it. The
	// flood's frames that reached the router between the release and the
	// client's next frame made an entry to the router's own address, which
	// only a cut that says local cuts: without it the client's flow would
	// come back on another NAT port, with another reply tuple.
	var cuts []cut.Cut
	if !waitFor(hang, func() bool {
		cuts, _ = r.eng.CutAddress(ctx, server, "again", "test", cut.CutOptions{Local: true})
		return len(cuts) > 0
	}) {
		t.Fatal("no flow to cut again")
	}
	if len(r.elementsOf(t, cut.ReleasedName4, labnet.ServerV4)) != 0 {
		t.Errorf("the new cut left released marks: %v", r.elementsOf(t, cut.ReleasedName4, labnet.ServerV4))
	}
	if !waitFor(hang, func() bool {
		for _, c := range r.eng.Summary().Cuts {
			if c.HasAddressIn(server) && c.Frames > 0 {
				return true
			}
		}
		return false
	}) {
		t.Errorf("the new cut drops no frame of the flow: %+v", r.eng.Summary().Cuts)
	}
}
