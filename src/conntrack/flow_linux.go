//go:build linux

package conntrack

import (
	"fmt"
	"net/netip"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// mapFlow turns a kernel conntrack entry into fastpath's Flow.
func mapFlow(f ctFlow) netstate.Flow {
	st := uint32(f.Status)
	var v netstate.Flow
	v.ID = f.ID
	v.Family = "ipv4"
	if f.TupleOrig.IP.SourceAddress.Is6() && !f.TupleOrig.IP.SourceAddress.Is4In6() {
		v.Family = "ipv6"
	}
	v.Proto = protoName(f.TupleOrig.Proto.Protocol)
	if f.ProtoInfo.TCP != nil {
		v.State = tcpStateName(f.ProtoInfo.TCP.State)
	}
	v.Original = mapTuple(f.TupleOrig)
	v.Reply = mapTuple(f.TupleReply)
	v.Offload = offloadOf(st)
	v.Assured = st&statusAssured != 0
	v.Packets = f.CountersOrig.Packets + f.CountersReply.Packets
	v.Bytes = f.CountersOrig.Bytes + f.CountersReply.Bytes
	v.Timeout = f.Timeout
	v.Mark = f.Mark
	return v
}

func mapTuple(t ctTuple) netstate.Tuple {
	return netstate.Tuple{
		Proto:   protoName(t.Proto.Protocol),
		Src:     addrString(t.IP.SourceAddress),
		Dst:     addrString(t.IP.DestinationAddress),
		SrcPort: t.Proto.SourcePort,
		DstPort: t.Proto.DestinationPort,
	}
}

func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.Unmap().String()
}

// kernelTuple turns one direction of a reported flow back into the
// kernel's tuple, for lookups and deletes.
func kernelTuple(t netstate.Tuple) (ctTuple, error) {
	var out ctTuple
	src, err := netip.ParseAddr(t.Src)
	if err != nil {
		return out, fmt.Errorf("tuple src %q: %w", t.Src, err)
	}
	dst, err := netip.ParseAddr(t.Dst)
	if err != nil {
		return out, fmt.Errorf("tuple dst %q: %w", t.Dst, err)
	}
	if src.Is4() != dst.Is4() {
		return out, fmt.Errorf("tuple %s -> %s mixes IPv4 and IPv6", src, dst)
	}
	proto, err := protoNumber(t.Proto)
	if err != nil {
		return out, err
	}
	out.IP.SourceAddress = src
	out.IP.DestinationAddress = dst
	out.Proto.Protocol = proto
	out.Proto.SourcePort = t.SrcPort
	out.Proto.DestinationPort = t.DstPort
	return out, nil
}
