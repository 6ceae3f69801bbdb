//go:build linux

package engine_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
)

// localFlow opens a UDP flow from the client to the router itself.
func (r *rig) localFlow(t *testing.T, port string) {
	t.Helper()
	l, err := labnet.ListenUDP(r.lab.Router, labnet.RouterLANV4+":"+port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	c, err := labnet.DialUDP(r.lab.Client, labnet.ClientV4+":"+port, labnet.RouterLANV4+":"+port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if !waitFor(hang, func() bool { c.Write([]byte("x")); return r.flowsTo(t, labnet.RouterLANV4) >= 1 }) {
		t.Fatal("the router tracks no flow to itself")
	}
}

// TestIntegrationCutGuards: a prefix shorter than cut_min_prefix4 is
// refused unless forced, and connections of the router itself (the
// admin's SSH or LuCI) are never cut unless the call says local, by a
// manual cut or by a block list, which also never cuts a range that wide.
func TestIntegrationCutGuards(t *testing.T) {
	r := newRig(t, "fpcg", banipConfig())
	r.localFlow(t, "9622")
	r.udpFlows(t, 3, 46000, 9600)
	ctx := context.Background()
	var refused *cut.RefusedError

	_, err := r.eng.CutAddress(ctx, netip.MustParsePrefix("0.0.0.0/0"), "test", "test", cut.CutOptions{})
	if !errors.As(err, &refused) || refused.Field != "address" || !strings.Contains(refused.Problem, "cut_min_prefix4") || !strings.Contains(refused.Fix, "force") {
		t.Fatalf("cut 0.0.0.0/0: %v, want a refusal naming cut_min_prefix4 and force", err)
	}
	if s := r.eng.Summary(); s.Active != 0 {
		t.Fatalf("a refused cut cut %d connections", s.Active)
	}

	// The client's address: its flows to the server are cut, its flow to
	// the router is not.
	cuts, err := r.eng.CutAddress(ctx, netip.MustParsePrefix(labnet.ClientV4+"/32"), "test", "test", cut.CutOptions{})
	if err != nil || len(cuts) != 3 {
		t.Fatalf("cut the client: %d cuts, %v; want its 3 forwarded flows", len(cuts), err)
	}
	if n := r.flowsTo(t, labnet.RouterLANV4); n != 1 || r.cutsTo(labnet.RouterLANV4) != 0 {
		t.Errorf("the client's flow to the router was cut: %d tracked, %d cuts", n, r.cutsTo(labnet.RouterLANV4))
	}
	if w := strings.Join(r.eng.Summary().Warnings, "; "); !strings.Contains(w, "1 connection(s) of the router itself were not cut") {
		t.Errorf("warnings do not say a local connection was spared: %s", w)
	}
	// Only the router's own connections: refused, saying why.
	_, err = r.eng.CutAddress(ctx, netip.MustParsePrefix(labnet.RouterLANV4+"/32"), "test", "test", cut.CutOptions{})
	if !errors.As(err, &refused) || !strings.Contains(refused.Problem, "the router itself") || !strings.Contains(refused.Fix, "local") {
		t.Fatalf("cut the router's address: %v, want a refusal naming local", err)
	}
	// Said explicitly: cut.
	cuts, err = r.eng.CutAddress(ctx, netip.MustParsePrefix(labnet.RouterLANV4+"/32"), "test", "test", cut.CutOptions{Local: true})
	if err != nil || len(cuts) != 1 {
		t.Fatalf("cut the router's address with local: %d cuts, %v", len(cuts), err)
	}
	// Forced: a wide prefix is cut.
	r.udpFlows(t, 2, 46100, 9601)
	cuts, err = r.eng.CutAddress(ctx, netip.MustParsePrefix("0.0.0.0/0"), "test", "test", cut.CutOptions{Force: true})
	if err != nil || len(cuts) != 2 {
		t.Fatalf("forced cut of 0.0.0.0/0: %d cuts, %v; want the 2 new forwarded flows", len(cuts), err)
	}
	for _, c := range cuts {
		if c.Original.Dst != labnet.ServerV4 {
			t.Errorf("forced cut of 0.0.0.0/0 cut %v", c.Original)
		}
	}
}

// TestIntegrationBlocklistGuards: a block list that lists everything
// (0.0.0.0/0, or the client's whole net as one wide range) cuts nothing
// and says why; one that lists the client cuts its forwarded flows and
// leaves its connection to the router alone.
func TestIntegrationBlocklistGuards(t *testing.T) {
	cfg := banipConfig()
	cfg.MinPrefix4 = 24
	r := newRig(t, "fpbg", cfg)
	if err := r.lab.Nft(r.lab.Router, banipSet("0.0.0.0/1, 128.0.0.0/1")); err != nil {
		t.Fatal(err)
	}
	r.localFlow(t, "9722")
	r.udpFlows(t, 3, 47000, 9700)
	r.watch(t, cfg)
	errs := strings.Join(r.eng.Summary().Blocklists[0].Errors, "; ")
	if !strings.Contains(errs, "0.0.0.0/0 is wider than /24 (fastpath.main.cut_min_prefix4)") {
		t.Errorf("errors %q: want the merged 0.0.0.0/0 named as too wide", errs)
	}
	if n := r.flowsTo(t, labnet.ServerV4); n != 3 || r.eng.Summary().Active != 0 {
		t.Fatalf("a list of everything cut: %d of 3 flows left, %d cuts", n, r.eng.Summary().Active)
	}
	reload := "delete set inet banIP hagezi.v4\n" + banipSet(labnet.ClientV4)
	if err := r.lab.Nft(r.lab.Router, reload); err != nil {
		t.Fatal(err)
	}
	if !waitFor(hang, func() bool { return r.cutsTo(labnet.ServerV4) == 3 }) {
		t.Fatalf("%d of the client's 3 forwarded flows cut", r.cutsTo(labnet.ServerV4))
	}
	if n := r.flowsTo(t, labnet.RouterLANV4); n != 1 || r.cutsTo(labnet.RouterLANV4) != 0 {
		t.Errorf("the listed client's flow to the router was cut: %d tracked, %d cuts", n, r.cutsTo(labnet.RouterLANV4))
	}
}
