//go:build linux

package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"github.com/fastpath-wrt/fastpath/src/nftevents"
)

// banipSet is a banIP-shaped set: dots in the name, flags interval,
// auto-merge; elements as nft text ("" for none).
func banipSet(elements string) string {
	els := ""
	if elements != "" {
		els = "\t\telements = { " + elements + " }\n"
	}
	return "table inet banIP {\n\tset hagezi.v4 {\n\t\ttype ipv4_addr\n\t\tflags interval\n\t\tauto-merge\n" + els + "\t}\n}\n"
}

// banipConfig watches it; cuts last a minute unless released, so a
// release is never mistaken for an expiry.
func banipConfig() cut.Config {
	cfg := testConfig()
	cfg.Expiry = time.Minute
	cfg.Blocklists = []cut.BlocklistConfig{{Name: "hagezi", Kind: cut.KindNftSet, Family: "inet", Table: "banIP", Set: "hagezi.v4"}}
	return cfg
}

// cutsTo counts the active cuts with the server as an end.
func (r *rig) cutsTo(addr string) int {
	n := 0
	for _, c := range r.eng.Summary().Cuts {
		if c.InFastpath && (c.Original.Dst == addr || c.Reply.Src == addr) {
			n++
		}
	}
	return n
}

func (r *rig) entries(t *testing.T) int {
	t.Helper()
	bl := r.eng.Summary().Blocklists
	if len(bl) != 1 {
		t.Fatalf("block lists %+v", bl)
	}
	return bl[0].Entries
}

// TestIntegrationIntervalAddedAtRunTime: a CIDR added to a watched
// interval set while the watch runs (two notifications: its start, and
// its end flagged NFT_SET_ELEM_INTERVAL_END) cuts the flows into it, and
// only those; an auto-merge set merging it with its neighbour does too.
func TestIntegrationIntervalAddedAtRunTime(t *testing.T) {
	r := newRig(t, "fpia", banipConfig())
	if err := r.lab.Nft(r.lab.Router, banipSet("10.90.3.0/24")); err != nil {
		t.Fatal(err)
	}
	r.watch(t, banipConfig())
	r.udpFlows(t, 5, 44000, 9400)
	if n := r.flowsTo(t, labnet.ServerV4); n != 5 {
		t.Fatalf("flows cut before the server's net was listed: %d of 5 left", n)
	}
	if _, err := r.lab.Exec(r.lab.Router, "nft", "add", "element", "inet", "banIP", "hagezi.v4", "{ 10.90.0.0/25 }"); err != nil {
		t.Fatal(err)
	}
	// 10.90.0.0/25 holds no end of the flows: nothing may be cut. The
	// addition below comes after it, so once that is seen so is this.
	// 10.90.2.0/24 touches 10.90.3.0/24: auto-merge makes one interval.
	if _, err := r.lab.Exec(r.lab.Router, "nft", "add", "element", "inet", "banIP", "hagezi.v4", "{ 10.90.2.0/24 }"); err != nil {
		t.Fatal(err)
	}
	if !waitFor(hang, func() bool { return r.flowsTo(t, labnet.ServerV4) == 0 }) {
		t.Fatalf("%d of 5 flows into the added 10.90.2.0/24 still tracked", r.flowsTo(t, labnet.ServerV4))
	}
	s := r.eng.Summary()
	if s.Active != 5 {
		t.Errorf("%d cuts active, want the 5 flows", s.Active)
	}
	for _, c := range s.Cuts {
		if c.Trigger != "blocklist:hagezi" || !strings.Contains(c.Reason, "10.90.2.2 is on a watched block list (10.90.2.0/23)") {
			t.Errorf("cut %v: trigger %q, reason %q", c.Original, c.Trigger, c.Reason)
		}
	}
	out, _ := r.lab.Exec(r.lab.Router, "nft", "list", "set", "inet", "banIP", "hagezi.v4")
	if n := r.entries(t); n != 2 {
		t.Errorf("entries %d, want 2 (10.90.0.0/25 and the merged 10.90.2.0-10.90.3.255); the kernel has: %s", n, out)
	}
}

// TestIntegrationListDeletionsRelease: every way an address leaves a
// watched set releases its cuts, and the count follows: an element
// deleted, banIP's reload (the set deleted and created again, same name,
// new handle, in one transaction) without it, the table deleted. A new
// connection to an address no longer listed is not cut.
func TestIntegrationListDeletionsRelease(t *testing.T) {
	r := newRig(t, "fpld", banipConfig())
	if err := r.lab.Nft(r.lab.Router, banipSet("192.0.2.0/24")); err != nil {
		t.Fatal(err)
	}
	// As the daemon runs it: the watch reads the notifications of the one
	// socket every watcher shares.
	var hub *nftevents.Hub
	if err := labnet.In(r.lab.Router, func() (err error) { hub, err = nftevents.Open(0); return err }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // after the watch's own cleanup, which runs first
	go hub.Run(ctx)
	r.eng.UseEvents(hub)
	r.watch(t, banipConfig())
	conns := r.udpFlows(t, 3, 45000, 9500)
	listServer := func(how string) {
		t.Helper()
		if _, err := r.lab.Exec(r.lab.Router, "nft", "add", "element", "inet", "banIP", "hagezi.v4", "{ "+labnet.ServerV4+" }"); err != nil {
			t.Fatal(err)
		}
		if !waitFor(hang, func() bool { return r.cutsTo(labnet.ServerV4) == 3 }) {
			t.Fatalf("%s: %d of 3 flows to the listed server cut", how, r.cutsTo(labnet.ServerV4))
		}
	}
	released := func(how string) {
		t.Helper()
		if !waitFor(hang, func() bool { return r.cutsTo(labnet.ServerV4) == 0 }) {
			t.Fatalf("after %s: %d cuts of the server still active: %+v", how, r.cutsTo(labnet.ServerV4), r.eng.Summary().Cuts)
		}
		// The flows pass again: conntrack tracks them anew, nothing cuts them.
		for _, c := range conns {
			c.Write([]byte("again"))
		}
		if !waitFor(hang, func() bool { return r.flowsTo(t, labnet.ServerV4) == 3 }) {
			t.Fatalf("after %s: %d of 3 released flows tracked again", how, r.flowsTo(t, labnet.ServerV4))
		}
		if n := r.cutsTo(labnet.ServerV4); n != 0 {
			t.Fatalf("after %s: the released flows were cut again (%d)", how, n)
		}
	}

	listServer("element added")
	if n := r.entries(t); n != 2 {
		t.Errorf("entries %d, want 2", n)
	}
	if _, err := r.lab.Exec(r.lab.Router, "nft", "delete", "element", "inet", "banIP", "hagezi.v4", "{ "+labnet.ServerV4+" }"); err != nil {
		t.Fatal(err)
	}
	released("nft delete element")
	if n := r.entries(t); n != 1 {
		t.Errorf("entries %d after the delete, want 1", n)
	}

	listServer("element added again")
	// banIP's reload: one nft -f, the set deleted and created anew.
	reload := "delete set inet banIP hagezi.v4\n" + banipSet("192.0.2.0/24, 198.51.100.0/24")
	if err := r.lab.Nft(r.lab.Router, reload); err != nil {
		t.Fatal(err)
	}
	released("banIP's reload without the server")
	if n := r.entries(t); n != 2 {
		t.Errorf("entries %d after the reload, want 2", n)
	}

	// The reload that keeps the server listed keeps its cuts.
	listServer("listed before a reload that keeps it")
	reload = "delete set inet banIP hagezi.v4\n" + banipSet("192.0.2.0/24, "+labnet.ServerV4)
	if err := r.lab.Nft(r.lab.Router, reload); err != nil {
		t.Fatal(err)
	}
	// Then an unrelated change: once it is seen, the reload was too.
	if _, err := r.lab.Exec(r.lab.Router, "nft", "add", "element", "inet", "banIP", "hagezi.v4", "{ 203.0.113.1 }"); err != nil {
		t.Fatal(err)
	}
	if !waitFor(hang, func() bool { return r.entries(t) == 3 }) {
		t.Fatalf("entries %d, want 3", r.entries(t))
	}
	if n := r.cutsTo(labnet.ServerV4); n != 3 {
		t.Errorf("a reload that keeps the server listed left %d of 3 cuts", n)
	}

	if _, err := r.lab.Exec(r.lab.Router, "nft", "delete", "table", "inet", "banIP"); err != nil {
		t.Fatal(err)
	}
	released("nft delete table")
	if bl := r.eng.Summary().Blocklists[0]; bl.Entries != 0 || len(bl.Errors) != 1 || !strings.Contains(bl.Errors[0], "deleted") {
		t.Errorf("after the table went: %+v", bl)
	}
	// Created again, the set is followed again.
	if err := r.lab.Nft(r.lab.Router, banipSet("")); err != nil {
		t.Fatal(err)
	}
	listServer("set created again")
}
