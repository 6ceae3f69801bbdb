//go:build linux

package engine_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/cut/engine"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
)

// TestIntegrationListDropsAddressDuringItsPass: a block-list pass puts its
// cuts in the sets batch by batch and deletes their conntrack entries at
// its end. A list that drops the address in between releases at once, and
// the release must find the cuts already in the sets: they were recorded
// only at the pass's end before, so the release saw none and the
// address stayed cut for as long as its flows sent.
func TestIntegrationListDropsAddressDuringItsPass(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "blocklist.txt")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path+".new", []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
	write("203.0.113.9\n")
	cfg := testConfig()
	cfg.Expiry = time.Minute // a cut left behind outlives the test
	cfg.Blocklists = []cut.BlocklistConfig{{Name: "local", Kind: cut.KindFile, Path: path}}
	r := newRig(t, "fplp", cfg)
	conns := r.udpFlows(t, 3, 46000, 9600)
	r.watch(t, cfg)
	// The server's address goes in; once the pass has its cuts in the
	// sets, the address goes out again, and the pass waits until the
	// watch has handled that (or 3 s) before it finishes.
	var once sync.Once
	hooked := make(chan struct{})
	engine.SetBeforeFinish(r.eng, func() {
		once.Do(func() {
			write("203.0.113.9\n")
			waitFor(3*time.Second, func() bool { return len(r.elementsOf(t, cut.SetName4, labnet.ServerV4)) == 0 })
			close(hooked)
		})
	})
	write("203.0.113.9\n" + labnet.ServerV4 + "\n")
	select {
	case <-hooked:
	case <-time.After(10 * time.Second):
		t.Fatal("no block-list pass cut the server's flows")
	}
	// Whatever the order, the address is no longer listed: nothing of it
	// may stay in the cut sets, and its flows forward again.
	if !waitFor(hang, func() bool {
		return len(r.elementsOf(t, cut.SetName4, labnet.ServerV4)) == 0 && r.cutsTo(labnet.ServerV4) == 0
	}) {
		t.Fatalf("after the list dropped the server during the pass that cut it: %d elements of it in %s, %d cuts known", len(r.elementsOf(t, cut.SetName4, labnet.ServerV4)), cut.SetName4, r.cutsTo(labnet.ServerV4))
	}
	for _, c := range conns {
		c.Write([]byte("again"))
	}
	if !waitFor(hang, func() bool { return r.flowsTo(t, labnet.ServerV4) == 3 }) {
		t.Fatalf("%d of 3 flows of the released server tracked again", r.flowsTo(t, labnet.ServerV4))
	}
}

// TestIntegrationListDropsAddressBeforeNewCut: a new connection of a
// listed address is looked up in the lists with no lock held, then cut. A
// list that drops the address in between has had its release pass by the
// time the cut takes the lock: the cut must see the list as it is then,
// not make a cut that nothing releases.
func TestIntegrationListDropsAddressBeforeNewCut(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "blocklist.txt")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path+".new", []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
	write("203.0.113.9\n" + labnet.ServerV4 + "\n")
	cfg := testConfig()
	cfg.Expiry = time.Minute // a cut left behind outlives the test
	cfg.Blocklists = []cut.BlocklistConfig{{Name: "local", Kind: cut.KindFile, Path: path}}
	r := newRig(t, "fpln", cfg)
	r.watch(t, cfg)
	var once sync.Once
	hooked := make(chan struct{})
	engine.SetBeforeNewCut(r.eng, func() {
		once.Do(func() {
			write("203.0.113.9\n")
			waitFor(3*time.Second, func() bool { return r.entries(t) == 1 })
			time.Sleep(300 * time.Millisecond) // the release pass that follows, which finds nothing yet
			close(hooked)
		})
	})
	r.udpFlows(t, 1, 47000, 9700) // a new connection of the listed server
	select {
	case <-hooked:
	case <-time.After(10 * time.Second):
		t.Fatal("the new connection of the listed server was not seen")
	}
	time.Sleep(500 * time.Millisecond) // the cut that follows the hook, if any
	if n, els := r.cutsTo(labnet.ServerV4), len(r.elementsOf(t, cut.SetName4, labnet.ServerV4)); n != 0 || els != 0 {
		t.Fatalf("the list dropped the server before its new connection was cut, yet %d cut(s) and %d element(s) of it are there, and nothing will release them", n, els)
	}
}
