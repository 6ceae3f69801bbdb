//go:build linux

package conntrack_test

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"github.com/fastpath-wrt/fastpath/src/netstate"
)

func newLab(t *testing.T, prefix string) *labnet.Lab {
	t.Helper()
	if m := labnet.Missing(); m != "" {
		t.Skip("needs " + m)
	}
	lab, err := labnet.New(prefix, true)
	if err != nil {
		t.Fatalf("build netns lab (needs veth, netns, nf_conntrack, nft masquerade): %v", err)
	}
	t.Cleanup(lab.Close)
	return lab
}

func openIn(t *testing.T, ns string) *conntrack.Client {
	t.Helper()
	var c *conntrack.Client
	if err := labnet.In(ns, func() (err error) { c, err = conntrack.Open(); return err }); err != nil {
		t.Fatalf("open conntrack in %s (needs nf_conntrack_netlink): %v", ns, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestIntegrationFlowsThroughNAT makes a UDP and a TCP connection from the
// client to the server through the masquerading router and checks what the
// router's conntrack reports, that the NATed far end is found, and that a
// delete removes one entry.
func TestIntegrationFlowsThroughNAT(t *testing.T) {
	lab := newLab(t, "fpct")
	ctc := openIn(t, lab.Router)

	srv, err := labnet.ListenUDP(lab.Server, labnet.ServerV4+":9000")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cli, err := labnet.DialUDP(lab.Client, labnet.ClientV4+":40000", labnet.ServerV4+":9000")
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	srv.SetReadDeadline(time.Now().Add(30 * time.Second)) // a bound for a loaded machine
	if _, from, err := srv.ReadFromUDP(buf); err != nil {
		t.Fatalf("server got no datagram: %v", err)
	} else if from.IP.String() != labnet.RouterWANV4 {
		t.Fatalf("datagram came from %s, want the masqueraded %s", from, labnet.RouterWANV4)
	}

	tl, err := labnet.ListenTCP(lab.Server, labnet.ServerV4+":9001")
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	go func() {
		if c, err := tl.Accept(); err == nil {
			defer c.Close()
			c.Read(buf)
		}
	}()
	tc, err := labnet.DialTCP(lab.Client, labnet.ServerV4+":9001")
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()

	flows, err := ctc.Flows(conntrack.Filter{Family: "ipv4"})
	if err != nil {
		t.Fatal(err)
	}
	udp := find(flows, "udp", 9000)
	tcp := find(flows, "tcp", 9001)
	if udp == nil || tcp == nil {
		t.Fatalf("router conntrack lacks the flows; has %+v", flows)
	}
	if udp.Original.Src != labnet.ClientV4 || udp.Original.Dst != labnet.ServerV4 || udp.Original.SrcPort != 40000 {
		t.Errorf("udp original tuple %+v", udp.Original)
	}
	if udp.Reply.Src != labnet.ServerV4 || udp.Reply.Dst != labnet.RouterWANV4 || udp.Reply.SrcPort != 9000 {
		t.Errorf("udp reply tuple %+v: want the masqueraded destination %s", udp.Reply, labnet.RouterWANV4)
	}
	if tcp.State != "ESTABLISHED" {
		t.Errorf("tcp state %q, want ESTABLISHED", tcp.State)
	}
	if udp.Offload != "" {
		t.Errorf("udp offload %q on a kernel path without flowtable", udp.Offload)
	}

	wan, err := ctc.FlowsWithAddress(netip.MustParsePrefix(labnet.RouterWANV4 + "/32"))
	if err != nil {
		t.Fatal(err)
	}
	if find(wan, "udp", 9000) == nil || find(wan, "tcp", 9001) == nil {
		t.Errorf("FlowsWithAddress(NAT address) missed flows: %+v", wan)
	}
	none, err := ctc.FlowsWithAddress(netip.MustParsePrefix("203.0.113.0/24"))
	if err != nil || len(none) != 0 {
		t.Errorf("FlowsWithAddress(unrelated) = %+v, %v", none, err)
	}

	counts, err := ctc.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if counts.Total < 2 || counts.Offloaded != 0 || counts.HWOffloaded != 0 {
		t.Errorf("counts %+v, want >= 2 total, none offloaded", counts)
	}

	if err := ctc.Delete(*udp); err != nil {
		t.Fatalf("delete: %v", err)
	}
	after, err := ctc.Flows(conntrack.Filter{Proto: "udp"})
	if err != nil {
		t.Fatal(err)
	}
	if find(after, "udp", 9000) != nil {
		t.Error("udp entry still there after Delete")
	}
	if err := ctc.Delete(*udp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("second delete: %v, want os.ErrNotExist", err)
	}
}

// TestIntegrationEvents sees a new and a destroyed connection.
func TestIntegrationEvents(t *testing.T) {
	lab := newLab(t, "fpce")
	ctc := openIn(t, lab.Router)
	evc := ctc
	got := make(chan conntrack.Event, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// The subscription's socket must be opened inside the namespace; once
	// Subscribe returns it has joined the groups, so no event is missed.
	var sub *conntrack.Subscription
	if err := labnet.In(lab.Router, func() (err error) { sub, err = evc.Subscribe(); return err }); err != nil {
		t.Fatal(err)
	}
	go func() { done <- sub.Run(ctx, func(e conntrack.Event) { got <- e }) }()

	cli, err := labnet.DialUDP(lab.Client, labnet.ClientV4+":40001", labnet.ServerV4+":9002")
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	cli.Write([]byte("x"))
	ev := waitEvent(t, got, conntrack.EventNew, 9002)
	if err := ctc.Delete(ev.Flow); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, got, conntrack.EventDestroy, 9002)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Events returned %v after cancel", err)
	}
}

func waitEvent(t *testing.T, c chan conntrack.Event, kind string, dport uint16) conntrack.Event {
	t.Helper()
	deadline := time.After(30 * time.Second) // a bound for a loaded machine, not a timing check
	for {
		select {
		case e := <-c:
			if e.Type == kind && e.Flow.Original.DstPort == dport {
				return e
			}
		case <-deadline:
			t.Fatalf("no %s event for port %d within 30 s", kind, dport)
		}
	}
}

func find(flows []netstate.Flow, proto string, dport uint16) *netstate.Flow {
	for i := range flows {
		if flows[i].Proto == proto && flows[i].Original.DstPort == dport {
			return &flows[i]
		}
	}
	return nil
}

// TestIntegrationDeleteMany deletes several entries in one round trip and
// reports a missing one on its own.
func TestIntegrationDeleteMany(t *testing.T) {
	lab := newLab(t, "fpcm")
	ctc := openIn(t, lab.Router)
	for _, p := range []string{"40100", "40101", "40102"} {
		c, err := labnet.DialUDP(lab.Client, labnet.ClientV4+":"+p, labnet.ServerV4+":9100")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("x"))
	}
	c6, err := labnet.DialUDP(lab.Client, "["+labnet.ClientV6+"]:40103", "["+labnet.ServerV6+"]:9100")
	if err != nil {
		t.Fatal(err)
	}
	defer c6.Close()
	deadline := time.Now().Add(30 * time.Second) // a bound for a loaded machine
	var flows []netstate.Flow
	for time.Now().Before(deadline) {
		c6.Write([]byte("x"))
		all, err := ctc.Flows(conntrack.Filter{Proto: "udp"})
		if err != nil {
			t.Fatal(err)
		}
		flows = flows[:0]
		for _, f := range all {
			if f.Original.DstPort == 9100 {
				flows = append(flows, f)
			}
		}
		if len(flows) == 4 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(flows) != 4 {
		t.Fatalf("router tracks %d of 4 flows after 30 s", len(flows))
	}
	missing := flows[0]
	missing.Original.SrcPort = 1
	errs := ctc.DeleteMany(append(flows, missing))
	for i, err := range errs[:4] {
		if err != nil {
			t.Errorf("delete %v: %v", flows[i].Original, err)
		}
	}
	if !errors.Is(errs[4], os.ErrNotExist) {
		t.Errorf("delete of a missing entry: %v, want os.ErrNotExist", errs[4])
	}
	left, _ := ctc.Flows(conntrack.Filter{Proto: "udp"})
	for _, f := range left {
		if f.Original.DstPort == 9100 {
			t.Errorf("still there: %+v", f)
		}
	}
}
