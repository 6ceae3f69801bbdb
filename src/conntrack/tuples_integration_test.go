//go:build linux

package conntrack_test

import (
	"fmt"
	"net/netip"
	"sort"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	ct "github.com/ti-mo/conntrack"
)

// populate creates entries in the router's table through ctnetlink:
// TCP, UDP and ICMP, IPv4 and IPv6, every other one with a masqueraded
// reply tuple, n in all.
func populate(tb testing.TB, ns string, n int) {
	tb.Helper()
	err := labnet.In(ns, func() error {
		c, err := ct.Dial(nil)
		if err != nil {
			return err
		}
		defer c.Close()
		for i := 0; i < n; i++ {
			f := synthetic(i)
			if err := c.Create(f); err != nil {
				return fmt.Errorf("create entry %d (%v): %w", i, f.TupleOrig, err)
			}
			if i%5 == 0 {
				// The kernel sets status bits only on an existing entry, and
				// refuses to clear confirmed or to assure before a reply.
				f.Status = ct.StatusConfirmed | ct.StatusSeenReply | ct.StatusAssured
				if err := c.Update(f); err != nil {
					return fmt.Errorf("assure entry %d (%v): %w", i, f.TupleOrig, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("populate conntrack (needs nf_conntrack_netlink): %v", err)
	}
}

// synthetic is the i-th entry populate creates.
func synthetic(i int) ct.Flow {
	v6 := i%2 == 1
	src, dst, nat := netip.AddrFrom4([4]byte{10, 91, byte(i >> 8), byte(i)}), netip.MustParseAddr("198.51.100.7"), netip.MustParseAddr("192.0.2.1")
	if v6 {
		src = netip.AddrFrom16([16]byte{0xfd, 0, 0x91, 15: byte(i)})
		src = netip.AddrFrom16(func() [16]byte { a := src.As16(); a[14] = byte(i >> 8); return a }())
		dst, nat = netip.MustParseAddr("2001:db8::7"), netip.MustParseAddr("2001:db8:1::1")
	}
	var proto uint8
	switch i % 3 {
	case 0:
		proto = 17
	case 1:
		proto = 6
	default:
		proto = 1
		if v6 {
			proto = 58
		}
	}
	sport, dport := uint16(20000+i), uint16(443)
	f := ct.NewFlow(proto, 0, src, dst, sport, dport, 600, 0)
	if proto == 1 || proto == 58 {
		echo, reply := uint8(8), uint8(0)
		if proto == 58 {
			echo, reply = 128, 129
		}
		f.TupleOrig.Proto = ct.ProtoTuple{Protocol: proto, ICMPID: uint16(i), ICMPType: echo}
		f.TupleReply.Proto = ct.ProtoTuple{Protocol: proto, ICMPID: uint16(i), ICMPType: reply}
	}
	if i%4 < 2 { // masqueraded: the reply comes back to the router's address
		f.TupleReply.IP.DestinationAddress = nat
		if proto != 1 && proto != 58 {
			f.TupleReply.Proto.DestinationPort = uint16(40000 + i)
		}
	}
	return f
}

// TestIntegrationTuplesMatchFlows: the lean dump reports every entry with
// the same family, protocol, tuples, id and status bits as the full dump.
func TestIntegrationTuplesMatchFlows(t *testing.T) {
	lab := newLab(t, "fpct")
	ctc := openIn(t, lab.Router)
	const n = 120
	populate(t, lab.Router, n)
	// A real connection through the masquerading router too.
	cli, err := labnet.DialUDP(lab.Client, labnet.ClientV4+":40300", labnet.ServerV4+":9300")
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	cli.Write([]byte("x"))

	full, err := ctc.Flows(conntrack.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	lean, d, err := ctc.Tuples()
	if err != nil {
		t.Fatal(err)
	}
	if d.Skipped != 0 || d.Entries != len(lean) {
		t.Errorf("dump report %+v for %d entries, want none skipped", d, len(lean))
	}
	if len(full) < n {
		t.Fatalf("full dump has %d entries, want at least the %d created", len(full), n)
	}
	want := make([]netstate.Flow, len(full))
	for i, f := range full {
		want[i] = tupleFields(f)
	}
	sortFlows(want)
	sortFlows(lean)
	if len(lean) != len(want) {
		t.Fatalf("lean dump has %d entries, full dump %d", len(lean), len(want))
	}
	kinds, assured := map[string]int{}, 0
	for i := range want {
		if lean[i] != want[i] {
			t.Errorf("entry %d:\n lean %+v\n full %+v", i, lean[i], want[i])
		}
		kinds[want[i].Family+"/"+want[i].Proto]++
		if want[i].Assured {
			assured++
		}
		if want[i].Original.Src == labnet.ClientV4 && want[i].Reply.Dst != labnet.RouterWANV4 {
			t.Errorf("the real connection is not masqueraded: %+v", want[i])
		}
	}
	for _, k := range []string{"ipv4/tcp", "ipv4/udp", "ipv4/icmp", "ipv6/tcp", "ipv6/udp", "ipv6/icmpv6"} {
		if kinds[k] == 0 {
			t.Errorf("no %s entry compared (have %v)", k, kinds)
		}
	}

	if assured == 0 {
		t.Error("no assured entry compared")
	}

	// Stopping early reads the rest of the dump, so the next one is whole.
	seen := 0
	if _, err := ctc.EachTuple(func(netstate.Flow) bool { seen++; return seen < 3 }); err != nil || seen != 3 {
		t.Errorf("stopped dump: %d entries seen, %v; want 3", seen, err)
	}
	again, _, err := ctc.Tuples()
	if err != nil || len(again) != len(lean) {
		t.Errorf("dump after a stopped one: %d entries, %v; want %d", len(again), err, len(lean))
	}
}

// tupleFields keeps what the lean dump reports of a full dump's entry.
func tupleFields(f netstate.Flow) netstate.Flow {
	return netstate.Flow{ID: f.ID, Family: f.Family, Proto: f.Proto, Original: f.Original, Reply: f.Reply, Offload: f.Offload, Assured: f.Assured}
}

func sortFlows(fs []netstate.Flow) {
	sort.Slice(fs, func(i, j int) bool { return fs[i].ID < fs[j].ID })
}

// BenchmarkIntegrationDump compares the full dump and the lean one on a
// table of 1,000 entries.
func BenchmarkIntegrationDump(b *testing.B) {
	if m := labnet.Missing(); m != "" {
		b.Skip("needs " + m)
	}
	lab, err := labnet.New("fpcb", false)
	if err != nil {
		b.Fatal(err)
	}
	defer lab.Close()
	var ctc *conntrack.Client
	if err := labnet.In(lab.Router, func() (err error) { ctc, err = conntrack.Open(); return err }); err != nil {
		b.Fatal(err)
	}
	defer ctc.Close()
	const n = 1000
	populate(b, lab.Router, n)
	b.Run("Flows", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if fl, err := ctc.Flows(conntrack.Filter{}); err != nil || len(fl) != n {
				b.Fatalf("%d entries, %v", len(fl), err)
			}
		}
	})
	b.Run("EachTuple", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			seen := 0
			if _, err := ctc.EachTuple(func(netstate.Flow) bool { seen++; return true }); err != nil || seen != n {
				b.Fatalf("%d entries, %v", seen, err)
			}
		}
	})
}
