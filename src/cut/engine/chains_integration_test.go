//go:build linux

package engine_test

import (
	"context"
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/cut/engine"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"github.com/fastpath-wrt/fastpath/src/logger"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// chainsOf lists the chain names of the cut table in a namespace.
func (r *rig) chainsOf(t *testing.T) []string {
	t.Helper()
	out, err := r.lab.Exec(r.lab.Router, "nft", "-t", "list", "table", "netdev", cut.TableName)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "chain" && f[2] == "{" {
			names = append(names, f[1])
		}
	}
	return names
}

// nftTransactions records, in the router's namespace, which of our table's
// objects each nftables transaction made: the kernel notifies every change
// of a commit and then NEWGEN, so changes between two NEWGEN are atomic.
type nftTransactions struct {
	conn *netlink.Conn
	// gens[i] lists the changes of transaction i: "chain in_lan0", "elements".
	gens chan []string
}

func (r *rig) watchTransactions(t *testing.T) *nftTransactions {
	t.Helper()
	w := &nftTransactions{gens: make(chan []string, 64)}
	err := labnet.In(r.lab.Router, func() (err error) {
		if w.conn, err = netlink.Dial(unix.NETLINK_NETFILTER, nil); err != nil {
			return err
		}
		return w.conn.JoinGroup(unix.NFNLGRP_NFTABLES)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.conn.Close() })
	go func() {
		var cur []string
		for {
			msgs, err := w.conn.Receive()
			if err != nil {
				close(w.gens)
				return
			}
			for _, m := range msgs {
				typ := uint16(m.Header.Type)
				if typ>>8 != unix.NFNL_SUBSYS_NFTABLES {
					continue
				}
				switch typ & 0xff {
				case unix.NFT_MSG_NEWGEN:
					w.gens <- cur
					cur = nil
				case unix.NFT_MSG_NEWCHAIN:
					if table, name := tableAndName(m.Data, unix.NFTA_CHAIN_TABLE, unix.NFTA_CHAIN_NAME); table == cut.TableName {
						cur = append(cur, "chain "+name)
					}
				case unix.NFT_MSG_NEWSETELEM:
					if table, _ := tableAndName(m.Data, unix.NFTA_SET_ELEM_LIST_TABLE, 0); table == cut.TableName {
						cur = append(cur, "elements")
					}
				}
			}
		}
	}()
	return w
}

func tableAndName(data []byte, tableAttr, nameAttr uint16) (table, name string) {
	if len(data) < 4 {
		return "", ""
	}
	ad, err := netlink.NewAttributeDecoder(data[4:])
	if err != nil {
		return "", ""
	}
	ad.ByteOrder = binary.BigEndian
	for ad.Next() {
		switch ad.Type() {
		case tableAttr:
			table = ad.String()
		case nameAttr:
			name = ad.String()
		}
	}
	return table, name
}

// next returns the next transaction that touched our table.
func (w *nftTransactions) next(t *testing.T) []string {
	t.Helper()
	timeout := time.After(3 * time.Second)
	for {
		select {
		case g, ok := <-w.gens:
			if !ok {
				t.Fatal("nftables notifications stopped")
			}
			if len(g) > 0 {
				return g
			}
		case <-timeout:
			t.Fatal("no nftables transaction on the cut table in 3 s")
		}
	}
}

// TestIntegrationChainsFollowCuts: no chain while nothing is cut; the
// first cut brings both chains in the transaction of its elements and its
// frames are dropped; once the flood stops and the elements expire the
// chains go, and the same tuple is forwarded again.
func TestIntegrationChainsFollowCuts(t *testing.T) {
	r := newRig(t, "fpch", testConfig()) // cut_expiry 2 s
	if c := r.chainsOf(t); len(c) != 0 {
		t.Fatalf("chains %v after Sync with no cut: want none", c)
	}
	client, server := labnet.ClientV4+":40070", labnet.ServerV4+":9070"
	f := r.startFlow(t, client, server, time.Millisecond, 20000)
	if !waitFor(hang, func() bool { return f.toClient.Load() > 100 }) {
		t.Fatalf("the flood does not reach the client before the cut: %d frames", f.toClient.Load())
	}
	tx := r.watchTransactions(t)
	cuts, err := r.eng.CutAddress(context.Background(), netip.MustParsePrefix(labnet.ServerV4+"/32"), "chains", "test", cut.CutOptions{})
	if err != nil || len(cuts) != 1 || !cuts[0].InFastpath {
		t.Fatalf("CutAddress = %+v, %v", cuts, err)
	}
	got := strings.Join(tx.next(t), ", ")
	if !strings.Contains(got, "chain in_lan0") || !strings.Contains(got, "chain in_wan0") || !strings.Contains(got, "elements") {
		t.Errorf("the cut's first transaction made [%s]: want both chains and the elements in one", got)
	}
	if c := r.chainsOf(t); strings.Join(c, " ") != "in_lan0 in_wan0" {
		t.Errorf("chains %v while a cut is active: want in_lan0 in_wan0", c)
	}
	time.Sleep(100 * time.Millisecond)
	c0, sent0 := r.delivered(t, r.lab.Client), f.serverSent.Load()
	time.Sleep(500 * time.Millisecond)
	if !waitFor(hang, func() bool { return f.serverSent.Load()-sent0 >= 100 }) {
		t.Fatalf("the flood sent %d frames in %v; the test measures nothing", f.serverSent.Load()-sent0, hang)
	}
	if d := r.delivered(t, r.lab.Client) - c0; d != 0 {
		t.Errorf("%d flood frames reached the client after the cut", d)
	}

	// The flood keeps the cut alive beyond its 2 s expiry: the idle
	// checks in between must leave the chains in place.
	time.Sleep(3500 * time.Millisecond)
	if c := r.chainsOf(t); len(c) != 2 || r.eng.Summary().Active != 1 {
		t.Fatalf("4 s into a flood with a 2 s expiry: chains %v, %d active cuts; want 2 and 1", c, r.eng.Summary().Active)
	}

	f.closeSockets()
	stopped := time.Now()
	// Expiry 2 s, the check 1 s after the latest expiry: 3 s, and some slack.
	if !waitFor(hang, func() bool { return len(r.chainsOf(t)) == 0 }) {
		t.Fatalf("chains %v still there 30 s after the traffic stopped (expiry 2 s)", r.chainsOf(t))
	}
	t.Logf("chains detached %v after the traffic stopped", time.Since(stopped).Round(10*time.Millisecond))
	if s := r.eng.Summary(); s.Active != 0 || !s.InFastpath || !strings.Contains(s.Reason, "on 2 device(s)") {
		t.Errorf("summary after the cut expired: %d active, in fast path %v, reason %q", s.Active, s.InFastpath, s.Reason)
	}

	// The same tuple again: it is forwarded.
	f2 := r.startFlow(t, client, server, time.Millisecond, 2000)
	if !waitFor(hang, func() bool { return f2.toClient.Load() > 100 && f2.toServer.Load() > 10 }) {
		t.Errorf("the expired cut's tuple is not forwarded: %d frames to the client, %d to the server", f2.toClient.Load(), f2.toServer.Load())
	}
	if c := r.chainsOf(t); len(c) != 0 {
		t.Errorf("chains %v came back without a cut", c)
	}
}

// TestIntegrationChainsAfterRestart: an engine that starts while elements
// are in the sets attaches the chains in Sync, and a release of the last
// cut detaches them at once.
func TestIntegrationChainsAfterRestart(t *testing.T) {
	cfg := testConfig()
	cfg.Expiry = 30 * time.Second
	r := newRig(t, "fpcr", cfg)
	tu := cut.Tuple{Proto: "udp", Src: "192.0.2.1", Dst: "192.0.2.2", SrcPort: 1, DstPort: 2}
	if _, err := r.eng.CutTuple(context.Background(), tu, "restart", "test", cut.CutOptions{}); err != nil {
		t.Fatal(err)
	}
	// The old process is gone and so are its chains; the elements stay.
	for _, c := range r.chainsOf(t) {
		if _, err := r.lab.Exec(r.lab.Router, "nft", "delete", "chain", "netdev", cut.TableName, c); err != nil {
			t.Fatal(err)
		}
	}
	var next *engine.Engine
	err := labnet.In(r.lab.Router, func() (err error) {
		next, err = engine.NewEngine(r.ct, logger.NewEntry(logger.New()))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { next.Cleanup() })
	if err := next.Sync([]string{"lan0", "wan0"}, cfg); err != nil {
		t.Fatal(err)
	}
	if c := r.chainsOf(t); strings.Join(c, " ") != "in_lan0 in_wan0" {
		t.Fatalf("Sync with live elements made chains %v: want in_lan0 in_wan0", c)
	}
	// Elements it did not put in are one cut each: original and reply.
	if s := next.Summary(); s.Active != 2 {
		t.Fatalf("the new engine sees %d cuts, want the 2 elements left behind", s.Active)
	}
	// (Releasing the first deletes both elements: its reply tuple is the
	// other one.)
	n, err := next.Release(context.Background(), func(cut.Cut) bool { return true })
	if err != nil || n == 0 || next.Summary().Active != 0 {
		t.Fatalf("Release = %d, %v, %d cuts left; want all released", n, err, next.Summary().Active)
	}
	if c := r.chainsOf(t); len(c) != 0 {
		t.Errorf("chains %v after the last cut was released: want none", c)
	}
}

// TestIntegrationChainsRefusedDevice: a device the kernel refuses a chain
// for (a name longer than IFNAMSIZ) spoils neither the cut nor the other
// devices' chains, and the summary names it.
func TestIntegrationChainsRefusedDevice(t *testing.T) {
	cfg := testConfig()
	r := newRig(t, "fpcd", cfg)
	bad := "averyveryverylongname0"
	if err := r.eng.Sync([]string{"lan0", "wan0", bad}, cfg); err != nil {
		t.Fatal(err)
	}
	f := r.startFlow(t, labnet.ClientV4+":40080", labnet.ServerV4+":9080", time.Millisecond, 5000)
	if !waitFor(hang, func() bool { return f.toClient.Load() > 100 }) {
		t.Fatal("no flood before the cut")
	}
	cuts, err := r.eng.CutAddress(context.Background(), netip.MustParsePrefix(labnet.ServerV4+"/32"), "refused", "test", cut.CutOptions{})
	if err != nil || len(cuts) != 1 || !cuts[0].InFastpath {
		t.Fatalf("CutAddress with a refused device = %+v, %v; want one cut in the fast path", cuts, err)
	}
	if c := r.chainsOf(t); strings.Join(c, " ") != "in_lan0 in_wan0" {
		t.Errorf("chains %v: want in_lan0 in_wan0", c)
	}
	if w := strings.Join(r.eng.Summary().Warnings, "\n"); !strings.Contains(w, bad) {
		t.Errorf("warnings %q do not name device %s", w, bad)
	}
	time.Sleep(100 * time.Millisecond)
	c0 := r.delivered(t, r.lab.Client)
	time.Sleep(500 * time.Millisecond)
	if d := r.delivered(t, r.lab.Client) - c0; d != 0 {
		t.Errorf("%d flood frames reached the client after the cut", d)
	}
}
