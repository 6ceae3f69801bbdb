//go:build linux

package blocklist

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// hang bounds a wait for what must come: reaching it fails the test.
const hang = 30 * time.Second

func flowTo(far string) Addrs {
	return AddrsOf(netstate.Flow{Proto: "tcp",
		Original: cut.Tuple{Proto: "tcp", Src: "192.168.1.2", Dst: far, SrcPort: 40000, DstPort: 443},
		Reply:    cut.Tuple{Proto: "tcp", Src: far, Dst: "203.0.113.1", SrcPort: 443, DstPort: 40000}})
}

// TestWatchFileSeam: what the engine relies on. A file list's addition
// reaches Added, and a line gone from the file calls removed only once
// Lists no longer lists it (a release made then finds every cut of it);
// the UCI list beside it stays listed throughout.
func TestWatchFileSeam(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "list.txt")
	write := func(text string) {
		t.Helper()
		tmp := filepath.Join(dir, "new")
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil { // as list updaters replace a file
			t.Fatal(err)
		}
	}
	write("198.51.100.7\n")
	cfg := cut.DefaultConfig()
	cfg.Blocklists = []cut.BlocklistConfig{
		{Name: "file", Kind: cut.KindFile, Path: path},
		{Name: "uci", Kind: cut.KindList, Addresses: []string{"192.0.2.0/24"}},
	}
	cfg, err := cfg.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ls := w.Lists()
	if l, ok := ls.Listed(flowTo("198.51.100.7"), nil); !ok || l.Trigger != "blocklist:file" {
		t.Fatalf("the file's address after Open: %+v %v", l, ok)
	}
	if l, ok := ls.Listed(flowTo("192.0.2.9"), nil); !ok || l.Trigger != "blocklist:uci" || l.Reason("") != "far end 192.0.2.9 is on a watched block list (192.0.2.0/24)" {
		t.Fatalf("the UCI list's address: %+v %v", l, ok)
	}

	removed := make(chan bool, 4) // whether 198.51.100.7 was still listed when removed ran
	done := make(chan error, 1)
	go func() {
		done <- w.Run(func() {
			_, still := ls.Listed(flowTo("198.51.100.7"), nil)
			removed <- still
		})
	}()

	write("198.51.100.7\n203.0.113.50\n")
	added, ok := w.Added()
	if !ok || !added.has(netip.MustParseAddr("203.0.113.50")) || added.has(netip.MustParseAddr("198.51.100.7")) {
		t.Fatalf("Added after a line was added: %+v %v", added, ok)
	}
	only := added
	if _, ok := ls.Listed(flowTo("203.0.113.50"), &only); !ok {
		t.Error("the added address is not listed within what was added")
	}
	if _, ok := ls.Listed(flowTo("192.0.2.9"), &only); ok {
		t.Error("an address listed before counts as added")
	}

	write("203.0.113.50\n")
	select {
	case still := <-removed:
		if still {
			t.Error("removed ran while Lists still listed the dropped address")
		}
	case <-time.After(hang):
		t.Fatal("a line gone from the file did not call removed")
	}
	if _, ok := ls.Listed(flowTo("192.0.2.9"), nil); !ok {
		t.Error("the UCI list's address is no longer listed")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after its context ended: %v", err)
	}
	if _, ok := w.Added(); ok {
		t.Error("Added returned after the context ended")
	}
}

// TestNilLists: before any watch the engine asks a nil *Lists.
func TestNilLists(t *testing.T) {
	var ls *Lists
	if _, ok := ls.Listed(flowTo("192.0.2.1"), nil); ok {
		t.Error("a nil Lists lists an address")
	}
	if r := ls.Report(); r != nil {
		t.Errorf("a nil Lists reports %v", r)
	}
}
