package conntrack

import (
	"fmt"
	"net/netip"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// Filter selects conntrack entries. The zero Filter selects all of them.
type Filter struct {
	Family  string       // "ipv4", "ipv6" or "" for both
	Proto   string       // "tcp", "udp", ... or "" for any
	Offload string       // "" any entry; OffloadAny, OffloadSoftware, OffloadHardware or OffloadNotOffloaded
	Address netip.Prefix // only entries with an end in this prefix, either direction; zero: any
	// Conn: only the entry whose original or reply direction is this
	// tuple (addresses and ports); zero: any. Set Address to its source
	// too, so the kernel narrows the dump.
	Conn netstate.Tuple
}

// Offload values of a Filter beside OffloadSoftware and OffloadHardware.
const (
	OffloadAny          = "any"  // IPS_OFFLOAD: in a flowtable, software or hardware
	OffloadNotOffloaded = "none" // neither offload bit
)

// AF_INET and AF_INET6 as the nfgenmsg header of a conntrack message
// carries them (the same numbers on every Linux architecture).
const (
	familyIPv4 uint8 = 2
	familyIPv6 uint8 = 10
)

// selector is a Filter in the kernel's terms: what a dump request can ask
// the kernel to narrow by, and the same test applied here to every entry
// the kernel sends, since older kernels ignore some of the request.
type selector struct {
	family      uint8 // familyIPv4, familyIPv6; 0: both
	proto       uint8
	anyProto    bool
	statusMask  uint32 // entries with status&statusMask == statusValue; 0 mask: any
	statusValue uint32
	addr        netip.Prefix
	conn        bool
	connAddrs   [2]netip.Addr // source, destination
	connPorts   [2]uint16
}

// selector checks the filter's fields and turns them into numbers.
func (f Filter) selector() (selector, error) {
	s := selector{anyProto: f.Proto == "", addr: f.Address}
	switch f.Family {
	case "":
	case "ipv4":
		s.family = familyIPv4
	case "ipv6":
		s.family = familyIPv6
	default:
		return s, fmt.Errorf("filter family %q: use ipv4, ipv6 or nothing", f.Family)
	}
	if !s.anyProto {
		p, err := protoNumber(f.Proto)
		if err != nil {
			return s, fmt.Errorf("filter proto: %w", err)
		}
		s.proto = p
	}
	switch f.Offload {
	case "":
	case OffloadAny:
		s.statusMask, s.statusValue = statusOffload, statusOffload
	case OffloadSoftware:
		s.statusMask, s.statusValue = statusOffload|statusHWOffload, statusOffload
	case OffloadHardware:
		s.statusMask, s.statusValue = statusHWOffload, statusHWOffload
	case OffloadNotOffloaded:
		s.statusMask, s.statusValue = statusOffload|statusHWOffload, 0
	default:
		return s, fmt.Errorf("filter offload %q: use any, software, hardware, none or nothing", f.Offload)
	}
	if f.Conn != (netstate.Tuple{}) {
		src, err1 := netip.ParseAddr(f.Conn.Src)
		dst, err2 := netip.ParseAddr(f.Conn.Dst)
		if err1 != nil || err2 != nil {
			return s, fmt.Errorf("filter connection %s: its addresses do not parse", f.Conn)
		}
		s.conn, s.connAddrs, s.connPorts = true, [2]netip.Addr{src.Unmap(), dst.Unmap()}, [2]uint16{f.Conn.SrcPort, f.Conn.DstPort}
	}
	return s, nil
}

// keys are the parts of an entry a selector looks at.
type keys struct {
	family uint8
	proto  uint8
	status uint32
	addrs  [4]netip.Addr // original src, dst, reply src, dst
	ports  [4]uint16     // the same ends' ports
}

func (s selector) matches(k *keys) bool {
	if s.family != 0 && k.family != s.family {
		return false
	}
	if !s.anyProto && k.proto != s.proto {
		return false
	}
	if k.status&s.statusMask != s.statusValue {
		return false
	}
	if s.conn && !s.namesConn(k, 0) && !s.namesConn(k, 2) {
		return false
	}
	if s.addr.IsValid() {
		return netstate.FirstEndIn(&k.addrs, s.addr) >= 0
	}
	return true
}

// namesConn: the direction whose source is end i of k is s's connection.
func (s selector) namesConn(k *keys, i int) bool {
	return k.addrs[i].Unmap() == s.connAddrs[0] && k.addrs[i+1].Unmap() == s.connAddrs[1] &&
		k.ports[i] == s.connPorts[0] && k.ports[i+1] == s.connPorts[1]
}

// queries are the dump requests that ask the kernel to narrow as s does.
// Linux filters a dump by family in nfgenmsg (every version), by status
// bits (CTA_STATUS and CTA_STATUS_MASK, 5.15) and by L4 protocol and exact
// addresses (CTA_FILTER, 5.8), the last two only for one family at a time
// and one direction per request: a protocol without a family is asked of
// IPv4 and of IPv6 in turn, and a single address of each of the four ends
// (original source and destination, reply source and destination) in
// turn. A wider prefix, and an IPv6 address, are compared here only: the
// kernel's IPv6 comparison is inverted (ctnetlink_filter_match_tuple tests
// !ipv6_addr_cmp): asked for one IPv6 address, Linux 6.18 sent every IPv6
// entry but those with it (measured).
func (s selector) queries() []dumpQuery {
	q := dumpQuery{family: s.family, statusMask: s.statusMask, statusValue: s.statusValue}
	if !s.anyProto {
		q.proto, q.hasProto = s.proto, true
	}
	if s.addr.IsValid() && s.addr.IsSingleIP() && s.addr.Addr().Is4() {
		fam := familyIPv4
		if s.family != 0 && s.family != fam {
			return nil // no entry of one family has an end of the other
		}
		qs := make([]dumpQuery, 4)
		for slot := range qs {
			qs[slot] = q
			qs[slot].family, qs[slot].addr, qs[slot].hasAddr, qs[slot].addrSlot = fam, s.addr.Addr(), true, int8(slot)
		}
		return qs
	}
	if s.anyProto || s.family != 0 {
		return []dumpQuery{q}
	}
	v4, v6 := q, q
	v4.family, v6.family = familyIPv4, familyIPv6
	return []dumpQuery{v4, v6}
}

// dumpQuery is one dump request's narrowing, in the kernel's terms.
type dumpQuery struct {
	family      uint8
	statusMask  uint32
	statusValue uint32
	proto       uint8
	hasProto    bool
	hasAddr     bool
	addr        netip.Addr // the end addrSlot names is addr
	addrSlot    int8       // 0 original source, 1 destination, 2 reply source, 3 destination
}
