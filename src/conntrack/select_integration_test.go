//go:build linux

package conntrack

import (
	"net/netip"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/conntrack/cttest"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	ct "github.com/ti-mo/conntrack"
)

// injectedLab is a router namespace whose table holds n entries of
// cttest.Mix, and a client open in it.
func injectedLab(t *testing.T, n int) (*Client, *ct.Conn) {
	t.Helper()
	if m := labnet.Missing(); m != "" {
		t.Skip("needs " + m)
	}
	lab, err := labnet.New("fpcs", true)
	if err != nil {
		t.Fatalf("build netns lab (needs veth, netns, nf_conntrack, nft masquerade): %v", err)
	}
	t.Cleanup(lab.Close)
	var c *Client
	var ref *ct.Conn
	err = labnet.In(lab.Router, func() error {
		if err := cttest.Inject(n, cttest.Mix); err != nil {
			return err
		}
		var err error
		if c, err = Open(); err != nil {
			return err
		}
		ref, err = ct.Dial(nil)
		return err
	})
	if err != nil {
		t.Fatalf("fill the router's table (needs nf_conntrack_netlink): %v", err)
	}
	t.Cleanup(func() { c.Close(); ref.Close() })
	return c, ref
}

// reference is the whole table as ti-mo/conntrack decodes it, mapped as
// fastpath reports a flow, by id.
func reference(t *testing.T, ref *ct.Conn) map[uint32]netstate.Flow {
	t.Helper()
	all, err := ref.Dump(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[uint32]netstate.Flow, len(all))
	for _, f := range all {
		out[f.ID] = mapFlow(refFlow(f))
	}
	return out
}

// refFlow copies what mapFlow reads from ti-mo/conntrack's decoding of an
// entry, the reference the package's own decoding is checked against.
func refFlow(f ct.Flow) ctFlow {
	tuple := func(t ct.Tuple) ctTuple {
		return ctTuple{
			IP:    ipTuple{SourceAddress: t.IP.SourceAddress, DestinationAddress: t.IP.DestinationAddress},
			Proto: protoTuple{Protocol: t.Proto.Protocol, SourcePort: t.Proto.SourcePort, DestinationPort: t.Proto.DestinationPort},
		}
	}
	out := ctFlow{
		ID: f.ID, Status: uint32(f.Status), Timeout: f.Timeout, Mark: f.Mark,
		TupleOrig: tuple(f.TupleOrig), TupleReply: tuple(f.TupleReply),
		CountersOrig:  ctCounter{Direction: f.CountersOrig.Direction, Packets: f.CountersOrig.Packets, Bytes: f.CountersOrig.Bytes},
		CountersReply: ctCounter{Direction: f.CountersReply.Direction, Packets: f.CountersReply.Packets, Bytes: f.CountersReply.Bytes},
	}
	if f.ProtoInfo.TCP != nil {
		out.ProtoInfo.TCP = &tcpInfo{State: f.ProtoInfo.TCP.State}
	}
	out.Helper.Name = f.Helper.Name
	return out
}

// wants is the filter's meaning written out on a reported flow, apart
// from the code under test.
func wants(f Filter, fl netstate.Flow) bool {
	if f.Family != "" && fl.Family != f.Family || f.Proto != "" && fl.Proto != f.Proto {
		return false
	}
	switch f.Offload {
	case OffloadAny:
		if fl.Offload == OffloadNone {
			return false
		}
	case OffloadNotOffloaded:
		if fl.Offload != OffloadNone {
			return false
		}
	case OffloadSoftware, OffloadHardware:
		if fl.Offload != f.Offload {
			return false
		}
	}
	return !f.Address.IsValid() || fl.HasAddressIn(f.Address)
}

// TestIntegrationSelectMatchesFullDecode: for every kind of filter, Select
// returns exactly the entries a full decode by ti-mo/conntrack selects,
// each decoded the same way (state, counters, mark, tuples, status), the
// limit bounds the list and not the total, and Counts agrees with the
// table.
func TestIntegrationSelectMatchesFullDecode(t *testing.T) {
	const n = 3000
	c, ref := injectedLab(t, n)
	all := reference(t, ref)
	refTime := time.Now()
	if len(all) < n {
		t.Fatalf("the table holds %d entries, want the %d injected", len(all), n)
	}
	filters := []Filter{{}}
	for _, fam := range []string{"", "ipv4", "ipv6"} {
		for _, proto := range []string{"", "tcp", "udp", "icmp", "icmpv6"} {
			for _, off := range []string{"", OffloadAny, OffloadSoftware, OffloadHardware, OffloadNotOffloaded} {
				filters = append(filters, Filter{Family: fam, Proto: proto, Offload: off})
			}
		}
	}
	// Single addresses are asked of the kernel end by end: the NAT address
	// (reply destination of every IPv4 entry), a far end (original
	// destination and reply source of many), a client of each family
	// (original source; for IPv6 also the reply destination).
	for _, p := range []string{"192.0.2.1/32", "198.51.100.7/32", "10.91.0.12/32", "fd00:9101::7/128", "2001:db8:7::7/128",
		"10.91.3.0/24", "198.51.101.0/24", "2001:db8::/32", "fd00:9101::/64", "203.0.113.0/24"} {
		filters = append(filters, Filter{Address: netip.MustParsePrefix(p)}, Filter{Address: netip.MustParsePrefix(p), Proto: "udp"})
	}
	kinds := map[string]int{}
	for _, f := range filters {
		got, total, err := c.Select(f, -1)
		if err != nil {
			t.Fatalf("%+v: %v", f, err)
		}
		want := 0
		for _, fl := range all {
			if wants(f, fl) {
				want++
			}
		}
		if f.Address.IsValid() && f.Proto == "" && want == 0 && f.Address.String() != "203.0.113.0/24" {
			t.Errorf("%+v selects nothing in the table: the comparison proves nothing", f)
		}
		if total != len(got) || len(got) != want {
			t.Errorf("%+v: %d flows, total %d; the full decode selects %d", f, len(got), total, want)
		}
		for _, fl := range got {
			r, ok := all[fl.ID]
			if !ok || !wants(f, fl) {
				t.Errorf("%+v: returned %+v, which the full decode does not select", f, fl)
				continue
			}
			// The timeout counts down between the two dumps.
			if d := int(r.Timeout) - int(fl.Timeout); d < 0 || d > int(time.Since(refTime).Seconds())+2 {
				t.Errorf("timeout %d, full decode %d", fl.Timeout, r.Timeout)
			}
			fl.Timeout = r.Timeout
			if fl != r {
				t.Errorf("decoded differently:\n got  %+v\n full %+v", fl, r)
			}
			if f == (Filter{}) {
				kinds[fl.Family+"/"+fl.Proto+"/"+fl.State]++
				if fl.Mark != 0 {
					kinds["mark"]++
				}
			}
		}
		limited, ltotal, err := c.Select(f, 7)
		if err != nil || ltotal != want || len(limited) != min(7, want) {
			t.Errorf("%+v limit 7: %d flows, total %d, %v; want %d, total %d", f, len(limited), ltotal, err, min(7, want), want)
		}
		for _, fl := range limited {
			if _, ok := all[fl.ID]; !ok || !wants(f, fl) {
				t.Errorf("%+v limit 7: returned %+v, which the full decode does not select", f, fl)
			}
		}
	}
	for _, k := range []string{"ipv4/tcp/ESTABLISHED", "ipv4/udp/", "ipv4/icmp/", "ipv6/tcp/ESTABLISHED", "ipv6/udp/", "ipv6/icmpv6/", "mark"} {
		if kinds[k] == 0 {
			t.Errorf("no %s entry compared (have %v)", k, kinds)
		}
	}

	counts, err := c.Counts()
	if err != nil {
		t.Fatal(err)
	}
	want := netstate.FlowCounts{Total: len(all)}
	for _, fl := range all {
		if fl.Offload != OffloadNone {
			want.Offloaded++
		}
		if fl.Offload == OffloadHardware {
			want.HWOffloaded++
		}
	}
	if counts != want {
		t.Errorf("counts %+v, the full decode counts %+v", counts, want)
	}
}

// TestIntegrationKernelNarrows: on a kernel with CTA_FILTER (5.8) and the
// status filter (5.15), the kernel sends only the entries asked for, so a
// query's cost follows its answer.
func TestIntegrationKernelNarrows(t *testing.T) {
	const n = 2000
	c, ref := injectedLab(t, n)
	all := reference(t, ref)
	hosts := []Filter{{Address: netip.MustParsePrefix("192.0.2.1/32")}, {Address: netip.MustParsePrefix("198.51.100.7/32"), Proto: "tcp"},
		{Address: netip.MustParsePrefix("10.91.0.5/32"), Family: "ipv4"}}
	for _, f := range append([]Filter{{Family: "ipv6"}, {Proto: "udp"}, {Proto: "tcp", Family: "ipv4"}, {Offload: OffloadAny}, {Proto: "icmp", Offload: OffloadNotOffloaded}}, hosts...) {
		sel, err := f.selector()
		if err != nil {
			t.Fatal(err)
		}
		sent := 0
		for _, q := range sel.queries() {
			d, err := c.walk(q, func(uint8, []byte) bool { return true })
			if err != nil {
				t.Fatalf("%+v: %v", f, err)
			}
			sent += d.Entries
		}
		want := 0
		for _, fl := range all {
			if !wants(f, fl) {
				continue
			}
			if !f.Address.IsValid() {
				want++
				continue
			}
			// One request per end: an entry with the address at two ends
			// is sent twice.
			for _, a := range []string{fl.Original.Src, fl.Original.Dst, fl.Reply.Src, fl.Reply.Dst} {
				if a == f.Address.Addr().String() {
					want++
				}
			}
		}
		if sent != want || (f.Address.IsValid() && want == 0) {
			t.Errorf("%+v: the kernel sent %d entries, %d match: it did not narrow the dump", f, sent, want)
		}
	}
}

// TestIntegrationEachTupleAfterSelect: a limited Select leaves the dump
// socket clean for the lean dump a cut uses.
func TestIntegrationEachTupleAfterSelect(t *testing.T) {
	c, _ := injectedLab(t, 500)
	if fl, total, err := c.Select(Filter{}, 3); err != nil || len(fl) != 3 || total < 500 {
		t.Fatalf("select: %d flows, total %d, %v", len(fl), total, err)
	}
	tuples, d, err := c.Tuples()
	if err != nil || d.Skipped != 0 || len(tuples) < 500 {
		t.Fatalf("tuples after a limited select: %d, %+v, %v", len(tuples), d, err)
	}
	sort.Slice(tuples, func(i, j int) bool { return tuples[i].ID < tuples[j].ID })
	for i := 1; i < len(tuples); i++ {
		if tuples[i].ID == tuples[i-1].ID {
			t.Fatalf("entry %d reported twice", tuples[i].ID)
		}
	}
}

// BenchmarkIntegrationDumpCost splits what a pass over the table costs.
// all-offloaded is what Counts costs where every entry is offloaded, which
// this machine's kernel (no flowtables) cannot show: the same pass with a
// status filter every entry passes (IPS_CONFIRMED), so the kernel encodes
// and sends each entry and only its status word is read. all-unread is
// the kernel's share of it (every entry sent, none looked at); no-match
// is the kernel's walk of its table alone (a status filter no entry
// passes: nothing is sent). FASTPATH_SCALE_ENTRIES as for the daemon's.
func BenchmarkIntegrationDumpCost(b *testing.B) {
	n := 65536
	if s := os.Getenv("FASTPATH_SCALE_ENTRIES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	if m := labnet.Missing(); m != "" {
		b.Skip("needs " + m)
	}
	lab, err := labnet.New("fpca", true)
	if err != nil {
		b.Fatal(err)
	}
	defer lab.Close()
	var c *Client
	if err := labnet.In(lab.Router, func() (err error) {
		if err = cttest.Inject(n, cttest.Mix); err != nil {
			return err
		}
		c, err = Open()
		return err
	}); err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	const confirmed, expected = 1 << 3, 1 << 0
	for _, r := range []struct {
		name       string
		mask, want uint32
		read       bool
		min        int
	}{
		{"no-match", expected, expected, false, 0},
		{"all-unread", confirmed, confirmed, false, n},
		{"all-offloaded", confirmed, confirmed, true, n},
	} {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				seen := 0
				d, err := c.walk(dumpQuery{statusMask: r.mask, statusValue: r.want}, func(_ uint8, attrs []byte) bool {
					if !r.read {
						return true
					}
					if st, ok := statusWord(attrs); ok && st&confirmed != 0 {
						seen++
					}
					return true
				})
				if err != nil || d.Entries < r.min || (r.read && seen < r.min) {
					b.Fatalf("%d entries sent, %d counted, %v", d.Entries, seen, err)
				}
			}
		})
	}
}
