//go:build linux

package conntrack

import (
	"errors"
	"net/netip"
	"os"
	"reflect"
	"syscall"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

func TestOffloadOf(t *testing.T) {
	cases := []struct {
		status uint32
		want   string
	}{
		{0, OffloadNone},
		{1<<3 | 1<<2, OffloadNone},
		{1 << 14, OffloadSoftware},
		{1<<14 | 1<<15, OffloadHardware},
		{1 << 15, OffloadHardware},
	}
	for _, c := range cases {
		if got := offloadOf(c.status); got != c.want {
			t.Errorf("offloadOf(%#x) = %q, want %q", c.status, got, c.want)
		}
	}
}

// newFlow is an entry of proto from src:sport to dst:dport, its reply
// the original reversed.
func newFlow(proto uint8, status uint32, src, dst netip.Addr, sport, dport uint16, timeout, mark uint32) ctFlow {
	return ctFlow{
		Status:     status,
		TupleOrig:  ctTuple{IP: ipTuple{src, dst}, Proto: protoTuple{proto, sport, dport}},
		TupleReply: ctTuple{IP: ipTuple{dst, src}, Proto: protoTuple{proto, dport, sport}},
		Timeout:    timeout,
		Mark:       mark,
	}
}

// natFlow is a TCP connection from 10.0.0.2 masqueraded to 192.0.2.1 on its
// way to 198.51.100.7, as `conntrack -L` would show it.
func natFlow() ctFlow {
	f := newFlow(6, statusAssured|statusOffload|statusHWOffload,
		netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("198.51.100.7"), 40000, 443, 120, 7)
	f.TupleReply.IP.DestinationAddress = netip.MustParseAddr("192.0.2.1")
	f.TupleReply.Proto.DestinationPort = 61000
	f.ProtoInfo.TCP = &tcpInfo{State: 3}
	f.CountersOrig = ctCounter{Packets: 10, Bytes: 1000}
	f.CountersReply = ctCounter{Direction: true, Packets: 5, Bytes: 300}
	f.ID = 99
	return f
}

func TestMapFlow(t *testing.T) {
	got := mapFlow(natFlow())
	want := netstate.Flow{
		ID: 99, Family: "ipv4", Proto: "tcp", State: "ESTABLISHED",
		Original: netstate.Tuple{Proto: "tcp", Src: "10.0.0.2", Dst: "198.51.100.7", SrcPort: 40000, DstPort: 443},
		Reply:    netstate.Tuple{Proto: "tcp", Src: "198.51.100.7", Dst: "192.0.2.1", SrcPort: 443, DstPort: 61000},
		Offload:  OffloadHardware, Assured: true, Packets: 15, Bytes: 1300, Timeout: 120, Mark: 7,
	}
	if got != want {
		t.Errorf("mapFlow:\n got %+v\nwant %+v", got, want)
	}
	v6 := newFlow(17, 0, netip.MustParseAddr("fd00::2"), netip.MustParseAddr("2001:db8::1"), 5353, 53, 30, 0)
	m := mapFlow(v6)
	if m.Family != "ipv6" || m.Proto != "udp" || m.Offload != OffloadNone || m.Assured || m.State != "" {
		t.Errorf("mapFlow(v6 udp) = %+v", m)
	}
}

func TestFilterMatches(t *testing.T) {
	hw := natFlow()
	cases := []struct {
		name string
		f    Filter
		want bool
	}{
		{"zero filter", Filter{}, true},
		{"family", Filter{Family: "ipv4"}, true},
		{"other family", Filter{Family: "ipv6"}, false},
		{"proto", Filter{Proto: "tcp"}, true},
		{"other proto", Filter{Proto: "udp"}, false},
		{"offloaded", Filter{Offload: OffloadAny}, true},
		{"hw offloaded", Filter{Offload: OffloadHardware}, true},
		{"software only", Filter{Offload: OffloadSoftware}, false},
		{"not offloaded", Filter{Offload: OffloadNotOffloaded}, false},
		{"far end", Filter{Address: netip.MustParsePrefix("198.51.100.0/24")}, true},
		{"NAT address, reply only", Filter{Address: netip.MustParsePrefix("192.0.2.1/32")}, true},
		{"unrelated", Filter{Address: netip.MustParsePrefix("203.0.113.0/24")}, false},
		{"all at once", Filter{Family: "ipv4", Proto: "tcp", Offload: OffloadAny, Address: netip.MustParsePrefix("10.0.0.0/8")}, true},
	}
	for _, c := range cases {
		sel, err := c.f.selector()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		k := keysOf(familyIPv4, &hw)
		if got := sel.matches(&k); got != c.want {
			t.Errorf("%s: matches = %v, want %v", c.name, got, c.want)
		}
	}
	sw := natFlow()
	sw.Status &^= statusHWOffload
	for f, want := range map[string]bool{OffloadHardware: false, OffloadSoftware: true, OffloadAny: true, OffloadNotOffloaded: false} {
		sel, _ := Filter{Offload: f}.selector()
		if k := keysOf(familyIPv4, &sw); sel.matches(&k) != want {
			t.Errorf("software-only entry, offload filter %q: matches %v, want %v", f, !want, want)
		}
	}
	for _, bad := range []Filter{{Family: "ipx"}, {Proto: "bogus"}, {Offload: "maybe"}} {
		if _, err := bad.selector(); err == nil {
			t.Errorf("filter %+v accepted", bad)
		}
	}
}

// TestSelectorQueries: what the kernel is asked to narrow by, for each
// kind of filter.
func TestSelectorQueries(t *testing.T) {
	cases := []struct {
		f    Filter
		want []dumpQuery
	}{
		{Filter{}, []dumpQuery{{}}},
		{Filter{Family: "ipv6"}, []dumpQuery{{family: familyIPv6}}},
		{Filter{Offload: OffloadSoftware}, []dumpQuery{{statusMask: statusOffload | statusHWOffload, statusValue: statusOffload}}},
		{Filter{Offload: OffloadNotOffloaded}, []dumpQuery{{statusMask: statusOffload | statusHWOffload}}},
		{Filter{Proto: "udp", Family: "ipv4"}, []dumpQuery{{family: familyIPv4, proto: 17, hasProto: true}}},
		// CTA_FILTER needs a family: one request per family.
		{Filter{Proto: "tcp", Offload: OffloadAny}, []dumpQuery{
			{family: familyIPv4, proto: 6, hasProto: true, statusMask: statusOffload, statusValue: statusOffload},
			{family: familyIPv6, proto: 6, hasProto: true, statusMask: statusOffload, statusValue: statusOffload}}},
		// A prefix is not the kernel's to compare.
		{Filter{Address: netip.MustParsePrefix("192.0.2.0/24")}, []dumpQuery{{}}},
		// A single address is, one end per request.
		{Filter{Address: netip.MustParsePrefix("198.51.100.7/32"), Proto: "udp"}, func() []dumpQuery {
			var qs []dumpQuery
			for slot := int8(0); slot < 4; slot++ {
				qs = append(qs, dumpQuery{family: familyIPv4, proto: 17, hasProto: true, hasAddr: true, addr: netip.MustParseAddr("198.51.100.7"), addrSlot: slot})
			}
			return qs
		}()},
		{Filter{Address: netip.MustParsePrefix("192.0.2.1/32"), Family: "ipv6"}, nil},
		// The kernel's IPv6 address comparison is inverted: not asked.
		{Filter{Address: netip.MustParsePrefix("2001:db8::7/128")}, []dumpQuery{{}}},
	}
	for _, c := range cases {
		sel, err := c.f.selector()
		if err != nil {
			t.Fatal(err)
		}
		if got := sel.queries(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: queries %+v, want %+v", c.f, got, c.want)
		}
	}
}

func TestFlowHasAddress(t *testing.T) {
	f := mapFlow(natFlow())
	if !f.HasAddressIn(netip.MustParsePrefix("192.0.2.1/32")) {
		t.Error("reply-side NAT address not found")
	}
	if f.HasAddressIn(netip.MustParsePrefix("192.0.2.2/32")) {
		t.Error("unrelated address found")
	}
}

func TestKernelTupleRoundTrip(t *testing.T) {
	f := natFlow()
	back, err := kernelTuple(mapTuple(f.TupleReply))
	if err != nil {
		t.Fatal(err)
	}
	if back.IP != f.TupleReply.IP || back.Proto.Protocol != 6 || back.Proto.SourcePort != 443 || back.Proto.DestinationPort != 61000 {
		t.Errorf("round trip: %+v, want %+v", back, f.TupleReply)
	}
	for _, bad := range []netstate.Tuple{
		{Proto: "tcp", Src: "10.0.0.1", Dst: "fd00::1"},
		{Proto: "tcp", Src: "10.0.0.300", Dst: "10.0.0.1"},
		{Proto: "bogus", Src: "10.0.0.1", Dst: "10.0.0.2"},
	} {
		if _, err := kernelTuple(bad); err == nil {
			t.Errorf("kernelTuple(%+v) accepted a bad tuple", bad)
		}
	}
}

func TestMapDeleteError(t *testing.T) {
	if err := mapDeleteError(syscall.EBUSY, "x"); !errors.Is(err, ErrOffloadedBusy) {
		t.Errorf("EBUSY -> %v, want ErrOffloadedBusy", err)
	}
	if err := mapDeleteError(syscall.ENOENT, "x"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ENOENT -> %v, want os.ErrNotExist", err)
	}
	if err := mapDeleteError(syscall.EPERM, "x"); errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrOffloadedBusy) || err == nil {
		t.Errorf("EPERM -> %v", err)
	}
	if mapDeleteError(nil, "x") != nil {
		t.Error("nil error mapped to non-nil")
	}
}

func TestTCPStateName(t *testing.T) {
	if tcpStateName(3) != "ESTABLISHED" || tcpStateName(7) != "TIME_WAIT" || tcpStateName(42) != "STATE_42" {
		t.Error("tcp state names wrong")
	}
}
