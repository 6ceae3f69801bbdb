//go:build linux

package engine_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/cut/engine"
	"github.com/fastpath-wrt/fastpath/src/cut/labnet"
)

// TestIntegrationReleaseUnderFlood cuts and releases a flow 20 times while
// the server floods it: a frame that passed the lookup before the delete
// re-adds the element in its update, and the flood would then keep it
// alive. Every release must restore forwarding. An unrelated cut keeps the
// chains attached throughout, so only the release itself can restore.
func TestIntegrationReleaseUnderFlood(t *testing.T) {
	cfg := testConfig()
	cfg.Expiry = 30 * time.Second
	r := newRig(t, "fprf", cfg)
	ctx := context.Background()
	other := cut.Tuple{Proto: "udp", Src: "192.0.2.1", Dst: "192.0.2.2", SrcPort: 1, DstPort: 2}
	if _, err := r.eng.CutTuple(ctx, other, "keeps the chains", "test"); err != nil {
		t.Fatal(err)
	}
	// 10,000 frames a second; the flood stops after 30 s or 300,000 frames.
	f := r.startFlow(t, labnet.ClientV4+":40090", labnet.ServerV4+":9090", 5*time.Microsecond, 3000000)
	if !waitFor(2*time.Second, func() bool { return f.toClient.Load() > 500 }) {
		t.Fatalf("the flood does not reach the client: %d frames", f.toClient.Load())
	}
	server := netip.MustParsePrefix(labnet.ServerV4 + "/32")
	ofServer := func(c cut.Cut) bool { return c.Original.Src == labnet.ServerV4 || c.Original.Dst == labnet.ServerV4 }
	start := time.Now()
	for i := 0; i < 20; i++ {
		cuts, err := r.eng.CutAddress(ctx, server, "flood", "test")
		if err != nil || len(cuts) == 0 {
			t.Fatalf("round %d: CutAddress = %+v, %v", i, cuts, err)
		}
		time.Sleep(50 * time.Millisecond)
		c0, sent0 := f.toClient.Load(), f.serverSent.Load()
		time.Sleep(100 * time.Millisecond)
		if sent := f.serverSent.Load() - sent0; sent < 200 {
			t.Fatalf("round %d: the flood sent %d frames in 100 ms; the test measures nothing", i, sent)
		}
		if d := f.toClient.Load() - c0; d != 0 {
			t.Fatalf("round %d: %d flood frames reached the client while cut", i, d)
		}
		n, err := r.eng.Release(ctx, ofServer)
		if err != nil || n == 0 {
			t.Fatalf("round %d: Release = %d, %v", i, n, err)
		}
		c1 := f.toClient.Load()
		if !waitFor(2*time.Second, func() bool { return f.toClient.Load() > c1+200 }) {
			s := r.eng.Summary()
			t.Fatalf("round %d: forwarding not restored 2 s after the release: %d frames to the client; %d cuts active: %+v",
				i, f.toClient.Load()-c1, s.Active, s.Cuts)
		}
		if f.serverSent.Load() >= 3000000 {
			t.Fatalf("round %d: the flood ran out of frames", i)
		}
	}
	t.Logf("20 cut/release rounds under a flood of %d frames in %v", f.serverSent.Load(), time.Since(start).Round(10*time.Millisecond))
	if s := r.eng.Summary(); s.Active != 1 || s.Cuts[0].Original != other {
		t.Errorf("after the rounds: %d cuts active (%+v), want the unrelated one alone", s.Active, s.Cuts)
	}
}

// TestIntegrationReleaseReAdded: an element re-added right after its delete
// (what a frame in flight does) is deleted again; one that keeps coming back
// makes Release fail naming its tuple.
func TestIntegrationReleaseReAdded(t *testing.T) {
	cfg := testConfig()
	cfg.Expiry = 30 * time.Second
	r := newRig(t, "fpra", cfg)
	ctx := context.Background()
	tu := cut.Tuple{Proto: "udp", Src: "192.0.2.1", Dst: "192.0.2.2", SrcPort: 1, DstPort: 2}
	all := func(cut.Cut) bool { return true }

	if _, err := r.eng.CutTuple(ctx, tu, "once", "test"); err != nil {
		t.Fatal(err)
	}
	engine.ReAddAfterDelete(r.eng, 1)
	if n, err := r.eng.Release(ctx, all); err != nil || n != 1 {
		t.Fatalf("Release with one re-add = %d, %v; want 1, nil", n, err)
	}
	if s := r.eng.Summary(); s.Active != 0 {
		t.Fatalf("a re-added element survived the release: %+v", s.Cuts)
	}
	if c := r.chainsOf(t); len(c) != 0 {
		t.Errorf("chains %v after the last cut was released", c)
	}

	if _, err := r.eng.CutTuple(ctx, tu, "always", "test"); err != nil {
		t.Fatal(err)
	}
	engine.ReAddAfterDelete(r.eng, 1000)
	_, err := r.eng.Release(ctx, all)
	if err == nil || !strings.Contains(err.Error(), tu.String()) || !strings.Contains(err.Error(), "came back") {
		t.Fatalf("Release of an element that keeps coming back: %v; want an error naming %s", err, tu)
	}
	t.Logf("error: %v", err)
	// It is still in the set, and the chains stay with it.
	if s := r.eng.Summary(); s.Active == 0 || len(r.chainsOf(t)) != 2 {
		t.Errorf("after the failed release: %d cuts active, chains %v; want the element and both chains", s.Active, r.chainsOf(t))
	}
}
