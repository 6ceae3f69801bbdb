//go:build linux

package conntrack

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// More ctnetlink numbers (uapi/linux/netfilter/nfnetlink_conntrack.h); the
// tuple ones are in deletemany_linux.go.
const (
	ctaTupleReply   = 2
	ctaStatus       = 3
	ctaProtoInfo    = 4
	ctaHelp         = 5
	ctaTimeout      = 7
	ctaMark         = 8
	ctaCountersOrig = 9
	ctaCountersRply = 10
	ctaID           = 12

	ctaCountersPackets   = 1 // u64
	ctaCountersBytes     = 2
	ctaCounters32Packets = 3 // u32, kernels before 2.6.27
	ctaCounters32Bytes   = 4
	ctaProtoInfoTCP      = 1
	ctaProtoInfoTCPState = 1
	ctaHelpName          = 1
)

// nlaTypeMask strips NLA_F_NESTED and NLA_F_NET_BYTEORDER from an
// attribute's type.
const nlaTypeMask = 0x3fff

var errShortAttr = errors.New("attribute runs past its parent")

// ctFlow is one decoded conntrack entry, the step between ctnetlink's
// attributes and netstate.Flow: the fields the selectors and mapFlow read.
type ctFlow struct {
	ID                          uint32
	Status                      uint32
	TupleOrig, TupleReply       ctTuple
	Timeout, Mark               uint32
	CountersOrig, CountersReply ctCounter
	ProtoInfo                   struct{ TCP *tcpInfo }
	Helper                      struct{ Name string }
}

// ctTuple is one direction of an entry (CTA_TUPLE_ORIG or _REPLY).
type ctTuple struct {
	IP    ipTuple
	Proto protoTuple
}

type ipTuple struct {
	SourceAddress, DestinationAddress netip.Addr
}

type protoTuple struct {
	Protocol                    uint8
	SourcePort, DestinationPort uint16
}

// ctCounter is CTA_COUNTERS_ORIG (Direction false) or _REPLY (true).
type ctCounter struct {
	Direction      bool
	Packets, Bytes uint64
}

// tcpInfo is CTA_PROTOINFO_TCP's state (TCP_CONNTRACK_*).
type tcpInfo struct {
	State uint8
}

// parseEntry reads the part of one conntrack entry a cut needs (its two
// tuples, status word and id) from the attributes of a ctnetlink message,
// skipping the rest (timestamps, labels, helpers); with full also what
// `flows` reports: timeout, mark, counters and TCP state, and the helper's
// name. It allocates only for the TCP state and helper of a full read. The result goes through mapFlow.
func parseEntry(attrs []byte, full bool) (ctFlow, error) {
	var f ctFlow
	var haveOrig, haveReply bool
	for len(attrs) > 0 {
		typ, val, rest, err := nextAttr(attrs)
		if err != nil {
			return f, err
		}
		attrs = rest
		switch typ {
		case ctaTupleOrig:
			if f.TupleOrig, err = parseTuple(val); err != nil {
				return f, fmt.Errorf("original tuple: %w", err)
			}
			haveOrig = true
		case ctaTupleReply:
			if f.TupleReply, err = parseTuple(val); err != nil {
				return f, fmt.Errorf("reply tuple: %w", err)
			}
			haveReply = true
		case ctaStatus:
			if len(val) != 4 {
				return f, fmt.Errorf("status of %d bytes, want 4", len(val))
			}
			f.Status = binary.BigEndian.Uint32(val)
		case ctaID:
			if len(val) != 4 {
				return f, fmt.Errorf("id of %d bytes, want 4", len(val))
			}
			f.ID = binary.BigEndian.Uint32(val)
		case ctaTimeout, ctaMark:
			if !full {
				continue
			}
			if len(val) != 4 {
				return f, fmt.Errorf("attribute %d of %d bytes, want 4", typ, len(val))
			}
			if typ == ctaTimeout {
				f.Timeout = binary.BigEndian.Uint32(val)
			} else {
				f.Mark = binary.BigEndian.Uint32(val)
			}
		case ctaCountersOrig, ctaCountersRply:
			if !full {
				continue
			}
			ctr := &f.CountersOrig
			if typ == ctaCountersRply {
				ctr = &f.CountersReply
				ctr.Direction = true
			}
			if err := parseCounters(val, ctr); err != nil {
				return f, err
			}
		case ctaProtoInfo:
			if !full {
				continue
			}
			if err := parseProtoInfo(val, &f); err != nil {
				return f, err
			}
		case ctaHelp:
			if !full {
				continue
			}
			if err := parseHelp(val, &f); err != nil {
				return f, err
			}
		}
	}
	if !haveOrig || !haveReply {
		return f, errors.New("entry lacks its original or reply tuple")
	}
	return f, nil
}

// parseTuple reads CTA_TUPLE_IP and CTA_TUPLE_PROTO; the zone is ignored.
func parseTuple(b []byte) (ctTuple, error) {
	var t ctTuple
	var haveProto bool
	for len(b) > 0 {
		typ, val, rest, err := nextAttr(b)
		if err != nil {
			return t, err
		}
		b = rest
		switch typ {
		case ctaTupleIP:
			if t.IP, err = parseIPTuple(val); err != nil {
				return t, err
			}
		case ctaTupleProto:
			if t.Proto, err = parseProtoTuple(val); err != nil {
				return t, err
			}
			haveProto = true
		}
	}
	if !t.IP.SourceAddress.IsValid() || !t.IP.DestinationAddress.IsValid() || !haveProto {
		return t, errors.New("tuple lacks an address or its protocol")
	}
	if t.IP.SourceAddress.Is4() != t.IP.DestinationAddress.Is4() {
		return t, errors.New("tuple mixes IPv4 and IPv6 addresses")
	}
	return t, nil
}

func parseIPTuple(b []byte) (ipTuple, error) {
	var ip ipTuple
	for len(b) > 0 {
		typ, val, rest, err := nextAttr(b)
		if err != nil {
			return ip, err
		}
		b = rest
		want := 4
		if typ == ctaIPv6Src || typ == ctaIPv6Dst {
			want = 16
		}
		a, ok := netip.AddrFromSlice(val)
		if !ok || len(val) != want {
			return ip, fmt.Errorf("address attribute %d of %d bytes, want %d", typ, len(val), want)
		}
		switch typ {
		case ctaIPv4Src, ctaIPv6Src:
			ip.SourceAddress = a
		case ctaIPv4Dst, ctaIPv6Dst:
			ip.DestinationAddress = a
		default:
			return ip, fmt.Errorf("unknown address attribute %d", typ)
		}
	}
	return ip, nil
}

// parseProtoTuple reads the protocol and, for port-based protocols, the
// ports (network byte order). ICMP's id, type and code are not ports and
// are skipped, as the full dump's mapping leaves them out too.
func parseProtoTuple(b []byte) (protoTuple, error) {
	var p protoTuple
	var haveNum bool
	for len(b) > 0 {
		typ, val, rest, err := nextAttr(b)
		if err != nil {
			return p, err
		}
		b = rest
		switch typ {
		case ctaProtoNum:
			if len(val) != 1 {
				return p, fmt.Errorf("protocol number of %d bytes, want 1", len(val))
			}
			p.Protocol, haveNum = val[0], true
		case ctaProtoSrcPort, ctaProtoDstPort:
			if len(val) != 2 {
				return p, fmt.Errorf("port of %d bytes, want 2", len(val))
			}
			if typ == ctaProtoSrcPort {
				p.SourcePort = binary.BigEndian.Uint16(val)
			} else {
				p.DestinationPort = binary.BigEndian.Uint16(val)
			}
		}
	}
	if !haveNum {
		return p, errors.New("protocol tuple lacks the protocol number")
	}
	return p, nil
}

// parseCounters reads CTA_COUNTERS_ORIG or _REPLY: packets and bytes.
func parseCounters(b []byte, c *ctCounter) error {
	for len(b) > 0 {
		typ, val, rest, err := nextAttr(b)
		if err != nil {
			return err
		}
		b = rest
		var n uint64
		switch len(val) {
		case 8:
			n = binary.BigEndian.Uint64(val)
		case 4:
			n = uint64(binary.BigEndian.Uint32(val))
		default:
			continue // CTA_COUNTERS_PAD and the like
		}
		switch typ {
		case ctaCountersPackets, ctaCounters32Packets:
			c.Packets = n
		case ctaCountersBytes, ctaCounters32Bytes:
			c.Bytes = n
		}
	}
	return nil
}

// parseProtoInfo reads the TCP state of CTA_PROTOINFO; other protocols'
// state is not reported.
func parseProtoInfo(b []byte, f *ctFlow) error {
	for len(b) > 0 {
		typ, val, rest, err := nextAttr(b)
		if err != nil {
			return err
		}
		b = rest
		if typ != ctaProtoInfoTCP {
			continue
		}
		for len(val) > 0 {
			t, v, r, err := nextAttr(val)
			if err != nil {
				return err
			}
			val = r
			if t == ctaProtoInfoTCPState && len(v) == 1 {
				f.ProtoInfo.TCP = &tcpInfo{State: v[0]}
			}
		}
	}
	return nil
}

// parseHelp reads the helper's name of CTA_HELP (a NUL-terminated string).
func parseHelp(b []byte, f *ctFlow) error {
	for len(b) > 0 {
		typ, val, rest, err := nextAttr(b)
		if err != nil {
			return err
		}
		b = rest
		if typ == ctaHelpName {
			if i := bytes.IndexByte(val, 0); i >= 0 {
				val = val[:i]
			}
			f.Helper.Name = string(val)
		}
	}
	return nil
}

// nextAttr splits the first netlink attribute (native-endian length and
// type, value padded to 4 bytes) off b.
func nextAttr(b []byte) (typ uint16, val, rest []byte, err error) {
	if len(b) < 4 {
		return 0, nil, nil, errShortAttr
	}
	n := int(binary.NativeEndian.Uint16(b[0:2]))
	if n < 4 || n > len(b) {
		return 0, nil, nil, errShortAttr
	}
	typ = binary.NativeEndian.Uint16(b[2:4]) & nlaTypeMask
	next := min((n+3)&^3, len(b))
	return typ, b[4:n], b[next:], nil
}
