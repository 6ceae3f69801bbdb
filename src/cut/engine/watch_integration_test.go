//go:build linux

package engine_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/cut/engine"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"github.com/google/nftables"
)

// watch runs WatchBlocklists in the router's namespace until the test ends
// and waits until its lists are read.
func (r *rig) watch(t *testing.T, cfg cut.Config) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- labnet.In(r.lab.Router, func() error { return r.eng.WatchBlocklists(ctx, cfg) }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("WatchBlocklists: %v", err)
		}
	})
	if !waitFor(hang, func() bool { return len(r.eng.Summary().Blocklists) == len(cfg.Blocklists) }) {
		t.Fatalf("block lists not read: %+v", r.eng.Summary().Blocklists)
	}
}

// udpFlows opens n UDP flows from the client to the server, one frame
// each, so the router tracks n connections with the server as far end.
func (r *rig) udpFlows(t *testing.T, n, firstPort, serverPort int) []*net.UDPConn {
	t.Helper()
	srv, err := labnet.ListenUDP(r.lab.Server, fmt.Sprintf("%s:%d", labnet.ServerV4, serverPort))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	var conns []*net.UDPConn
	err = labnet.In(r.lab.Client, func() error {
		for i := 0; i < n; i++ {
			c, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP(labnet.ClientV4), Port: firstPort + i},
				&net.UDPAddr{IP: net.ParseIP(labnet.ServerV4), Port: serverPort})
			if err != nil {
				return err
			}
			conns = append(conns, c)
		}
		return nil
	})
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// Frames queued behind unresolved neighbours are dropped beyond a few:
	// send until the router tracks every flow (a resend changes nothing).
	if !waitFor(hang, func() bool {
		for _, c := range conns {
			c.Write([]byte("x"))
		}
		return waitFor(100*time.Millisecond, func() bool { return r.flowsTo(t, labnet.ServerV4) >= n })
	}) {
		t.Fatalf("router tracks %d of %d flows", r.flowsTo(t, labnet.ServerV4), n)
	}
	return conns
}

func (r *rig) flowsTo(t *testing.T, addr string) int {
	fl, err := r.ct.FlowsWithAddress(netip.MustParsePrefix(addr + "/32"))
	if err != nil {
		t.Fatal(err)
	}
	return len(fl)
}

// TestIntegrationWatchFile: adding the server to a block-list file (by an
// atomic rename) cuts its established flows; malformed lines are reported.
func TestIntegrationWatchFile(t *testing.T) {
	r := newRig(t, "fpwf", testConfig())
	dir := t.TempDir()
	path := filepath.Join(dir, "blocklist.txt")
	if err := os.WriteFile(path, []byte("# nothing yet\n203.0.113.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Blocklists = []cut.BlocklistConfig{{Name: "local", Kind: cut.KindFile, Path: path}}
	r.udpFlows(t, 5, 41000, 9100)
	r.watch(t, cfg)
	if n := r.flowsTo(t, labnet.ServerV4); n != 5 {
		t.Fatalf("flows cut before the server was listed: %d left", n)
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte("203.0.113.9\nbogus line\n"+labnet.ServerV4+"/32\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if !waitFor(hang, func() bool { return r.flowsTo(t, labnet.ServerV4) == 0 }) {
		t.Fatalf("%d flows to the listed server still tracked", r.flowsTo(t, labnet.ServerV4))
	}
	s := r.eng.Summary()
	if s.Active != 5 || s.Cuts[0].Trigger != "blocklist:local" {
		t.Errorf("summary: %d active, cuts %+v", s.Active, s.Cuts)
	}
	if len(s.Blocklists) != 1 || s.Blocklists[0].Entries != 2 || len(s.Blocklists[0].Errors) != 1 || !strings.Contains(s.Blocklists[0].Errors[0], ":2:") {
		t.Errorf("block list report %+v: want 2 entries and line 2 reported", s.Blocklists)
	}
}

// TestIntegrationWatchNftSet: adding the server to a watched nftables set
// cuts 1000 established flows (how long it took is logged, not judged),
// and a new flow to the listed address is cut as it appears.
func TestIntegrationWatchNftSet(t *testing.T) {
	r := newRig(t, "fpwn", testConfig())
	if err := r.lab.Nft(r.lab.Router, "table inet banIP {\n\tset blocklistv4 {\n\t\ttype ipv4_addr\n\t\tflags interval\n\t\telements = { 203.0.113.0/24 }\n\t}\n}\n"); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Blocklists = []cut.BlocklistConfig{{Name: "banip", Kind: cut.KindNftSet, Family: "inet", Table: "banIP", Set: "blocklistv4"}}
	const n = 1000
	var gone, all atomic.Int64
	// Watch first: conntrack reports the destruction of an entry only if a
	// listener existed when the entry was made (nf_conntrack_events=2).
	r.watch(t, cfg)
	r.udpFlows(t, n, 42000, 9200)
	if bl := r.eng.Summary().Blocklists; bl[0].Entries != 1 || len(bl[0].Errors) != 0 {
		t.Fatalf("initial read of the set: %+v", bl)
	}

	var nc *nftables.Conn
	if err := labnet.In(r.lab.Router, func() (err error) { nc, err = nftables.New(nftables.AsLasting()); return err }); err != nil {
		t.Fatal(err)
	}
	defer nc.CloseLasting()
	// nft add element inet banIP blocklistv4 { 10.90.2.2 }, as interval
	// elements: the address, and the end of its interval.
	set := &nftables.Set{Table: &nftables.Table{Family: nftables.TableFamilyINet, Name: "banIP"}, Name: "blocklistv4", KeyType: nftables.TypeIPAddr, Interval: true}
	srv := netip.MustParseAddr(labnet.ServerV4)
	if err := nc.SetAddElements(set, []nftables.SetElement{{Key: srv.AsSlice()}, {Key: srv.Next().AsSlice(), IntervalEnd: true}}); err != nil {
		t.Fatal(err)
	}
	// Conntrack's destroy events time the deletes without loading the
	// machine with dumps.
	var sub *conntrack.Subscription
	if err := labnet.In(r.lab.Router, func() (err error) { sub, err = r.ct.Subscribe(); return err }); err != nil {
		t.Fatal(err)
	}
	evCtx, stopEvents := context.WithCancel(context.Background())
	defer stopEvents()
	lastGone := make(chan time.Time, 1)
	go func() {
		err := sub.Run(evCtx, func(ev conntrack.Event) {
			all.Add(1)
			if ev.Type == conntrack.EventDestroy && ev.Flow.Original.Dst == labnet.ServerV4 && ev.Flow.Original.DstPort == 9200 {
				if gone.Add(1) == n {
					lastGone <- time.Now()
				}
			}
		})
		if err != nil {
			t.Logf("events: %v after %d events", err, all.Load())
		}
	}()
	// Counted with the engine locked; late conntrack events of the flows
	// may cut some of them one by one, so count up to n, not exactly n.
	inSets := make(chan time.Time, 1)
	var inserted atomic.Int64
	engine.SetAfterInsert(r.eng, func(cuts int) {
		if now := inserted.Add(int64(cuts)); now >= n && now-int64(cuts) < n {
			inSets <- time.Now()
		}
	})
	start := time.Now()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	added := time.Since(start)
	var dropping, took time.Duration
	select {
	case at := <-inSets:
		dropping = at.Sub(start)
	case <-time.After(30 * time.Second): // a hang, not a speed: the figures above are logged
		t.Fatalf("only %d of %d cuts in the sets 30 s after the set addition", inserted.Load(), n)
	}
	select {
	case end := <-lastGone:
		took = end.Sub(start)
	case <-time.After(30 * time.Second):
		t.Fatalf("%d of %d flows still tracked 30 s after the set addition (%d destroy events of %d)", r.flowsTo(t, labnet.ServerV4), n, gone.Load(), all.Load())
	}
	s := r.eng.Summary()
	t.Logf("set addition -> %d flows dropped in the fast path after %v, their conntrack entries gone after %v (the addition itself %v); %d cuts active", n, dropping, took, added, s.Active)
	if s.Active != n {
		t.Errorf("%d cuts active, want %d", s.Active, n)
	}
	// How fast is for benchmarks: on a loaded 2-core machine the figures
	// vary, so they are logged above, and the generous waits decide.

	// A new flow to the listed address is cut when conntrack reports it.
	r.udpFlows(t, 0, 0, 9300) // just the server socket
	c, err := labnet.DialUDP(r.lab.Client, labnet.ClientV4+":43000", labnet.ServerV4+":9300")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("new"))
	if !waitFor(hang, func() bool {
		for _, x := range r.eng.Summary().Cuts {
			if x.Original.SrcPort == 43000 && x.Trigger == "blocklist:banip" {
				return true
			}
		}
		return false
	}) {
		t.Error("a new flow to the listed address was not cut")
	}
}
