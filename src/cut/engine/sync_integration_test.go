//go:build linux

package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

// TestIntegrationSyncMatchesRender: with no cut, Sync builds the sets and
// no chain, and removes chains of the table it finds; once a cut is in,
// the table lists exactly like what Render's text builds when nft loads it
// in another namespace (set elements aside).
func TestIntegrationSyncMatchesRender(t *testing.T) {
	cfg := testConfig()
	cfg.Expiry = 30 * time.Second
	r := newRig(t, "fpcs", cfg)
	list := func(ns string) string {
		t.Helper()
		out, err := r.lab.Exec(ns, "nft", "-t", "list", "table", "netdev", cut.TableName)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got, want := list(r.lab.Router), cut.Render(nil, cfg); got != want {
		t.Errorf("Sync with no cut built:\n%s\nwant the sets alone:\n%s", got, want)
	}
	// Chains left by an earlier run with no element behind them go.
	stale := "add chain netdev " + cut.TableName + " in_lan0 { type filter hook ingress device \"lan0\" priority -500; policy accept; }\n" +
		"add rule netdev " + cut.TableName + " in_lan0 ip saddr . ip daddr . meta l4proto . th sport . th dport @cut4 drop\n"
	if err := r.lab.Nft(r.lab.Router, stale); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list(r.lab.Router), "chain in_lan0") {
		t.Fatal("loading Render's text added no chain")
	}
	if err := r.eng.Sync([]string{"lan0", "wan0"}, cfg); err != nil {
		t.Fatal(err)
	}
	if out := list(r.lab.Router); strings.Contains(out, "chain ") {
		t.Errorf("Sync with empty sets kept chains:\n%s", out)
	}

	tu := cut.Tuple{Proto: "udp", Src: "192.0.2.1", Dst: "192.0.2.2", SrcPort: 1, DstPort: 2}
	if _, err := r.eng.CutTuple(context.Background(), tu, "render", "test", cut.CutOptions{}); err != nil {
		t.Fatal(err)
	}
	built := list(r.lab.Router)
	// The server namespace gets veths named like the router's to load the text.
	if _, err := r.lab.Exec(r.lab.Server, "ip", "link", "add", "lan0", "type", "veth", "peer", "name", "wan0"); err != nil {
		t.Fatal(err)
	}
	if err := r.lab.Nft(r.lab.Server, cut.Render([]string{"wan0", "lan0"}, cfg)); err != nil {
		t.Fatalf("nft rejects Render's text: %v", err)
	}
	if loaded := list(r.lab.Server); built != loaded {
		t.Errorf("Sync plus a cut and Render differ:\n--- Sync, cut\n%s--- nft -f Render\n%s", built, loaded)
	}
}

// TestIntegrationSyncIdempotent: syncing again keeps live elements; a
// device that goes away loses its chain; cut_in_fastpath off removes the
// table; an expiry change re-creates the sets.
func TestIntegrationSyncIdempotent(t *testing.T) {
	cfg := testConfig()
	cfg.Expiry = 30 * time.Second
	r := newRig(t, "fpci", cfg)
	ctx := context.Background()
	tu := cut.Tuple{Proto: "tcp", Src: "192.0.2.1", Dst: "198.51.100.1", SrcPort: 1000, DstPort: 443}
	if _, err := r.eng.CutTuple(ctx, tu, "keep", "test", cut.CutOptions{}); err != nil {
		t.Fatal(err)
	}
	list := func() string {
		out, _ := r.lab.Exec(r.lab.Router, "nft", "list", "table", "netdev", cut.TableName)
		return out
	}
	before := list()
	for i := 0; i < 3; i++ {
		if err := r.eng.Sync([]string{"wan0", "lan0"}, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if r.eng.Summary().Active != 1 {
		t.Fatalf("re-sync lost the element: %+v", r.eng.Summary())
	}
	if !strings.Contains(list(), "in_wan0") || strings.Count(list(), "drop") != strings.Count(before, "drop") {
		t.Errorf("re-sync changed the table:\n%s\nwas\n%s", list(), before)
	}

	// The device vanishes and is no longer listed.
	if _, err := r.lab.Exec(r.lab.Router, "ip", "link", "del", "wan0"); err != nil {
		t.Fatal(err)
	}
	if err := r.eng.Sync([]string{"lan0"}, cfg); err != nil {
		t.Fatal(err)
	}
	if out := list(); strings.Contains(out, "in_wan0") || !strings.Contains(out, "in_lan0") {
		t.Errorf("after wan0 went away:\n%s", out)
	}
	if r.eng.Summary().Active != 1 {
		t.Error("a chain change lost the element")
	}

	// A listed device that does not exist is a warning, not a failure
	// (newer kernels accept a chain for a device that is not there yet).
	if err := r.eng.Sync([]string{"lan0", "nosuch0"}, cfg); err != nil {
		t.Fatal(err)
	}
	w := strings.Join(r.eng.Summary().Warnings, "\n")
	if !strings.Contains(w, "nosuch0") && !strings.Contains(list(), "in_nosuch0") {
		t.Errorf("device nosuch0 has neither a chain nor a warning: %q", w)
	}
	t.Logf("missing device: warnings %q", w)

	cfg.Expiry = 5 * time.Second
	if err := r.eng.Sync([]string{"lan0"}, cfg); err != nil {
		t.Fatal(err)
	}
	if out := list(); !strings.Contains(out, "timeout 5s") || strings.Contains(out, "timeout 30s") {
		t.Errorf("expiry change not applied:\n%s", out)
	}
	// The re-created sets are empty: no chain stays attached.
	if out := list(); strings.Contains(out, "chain ") {
		t.Errorf("chains kept with empty re-created sets:\n%s", out)
	}

	cfg.InFastpath = false
	if err := r.eng.Sync([]string{"lan0"}, cfg); err != nil {
		t.Fatal(err)
	}
	if out, _ := r.lab.Exec(r.lab.Router, "nft", "list", "tables"); strings.Contains(out, cut.TableName) {
		t.Errorf("table still there with cut_in_fastpath off: %s", out)
	}
	if s := r.eng.Summary(); s.InFastpath || !strings.Contains(s.Reason, "cut_in_fastpath") {
		t.Errorf("summary %+v", s)
	}
}
