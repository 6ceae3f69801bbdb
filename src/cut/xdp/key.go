package xdp

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

// The map key, as the program builds it on its stack from the frame's
// bytes (network byte order, so one key is right on every CPU):
//
//	0   family: 4 or 6
//	1   IP protocol: 6 (tcp) or 17 (udp)
//	2   source port
//	4   destination port
//	6   zero
//	8   source address (IPv4: 4 bytes, then zeros)
//	24  destination address
const (
	KeySize   = 40
	ValueSize = 24 // packets, last frame's bpf_ktime_get_ns, the cut's time (u64s in the CPU's order)

	keyFamily = 0
	keyProto  = 1
	keySport  = 2
	keyDport  = 4
	keySrc    = 8
	keyDst    = 24
)

// Key is one direction of a cut connection as the map holds it.
type Key [KeySize]byte

// EncodeKey builds the map key of a tuple.
func EncodeKey(t cut.Tuple) (Key, error) {
	var k Key
	src, dst, proto, err := cut.ParseTuple(t)
	if err != nil {
		return k, err
	}
	k[keyFamily] = 4
	if src.Is6() {
		k[keyFamily] = 6
	}
	k[keyProto] = proto
	binary.BigEndian.PutUint16(k[keySport:], t.SrcPort)
	binary.BigEndian.PutUint16(k[keyDport:], t.DstPort)
	copy(k[keySrc:], src.AsSlice())
	copy(k[keyDst:], dst.AsSlice())
	return k, nil
}

// Tuple decodes a key read back from the map.
func (k Key) Tuple() (cut.Tuple, error) {
	alen := 4
	switch k[keyFamily] {
	case 4:
	case 6:
		alen = 16
	default:
		return cut.Tuple{}, fmt.Errorf("map key of family %d: want 4 or 6", k[keyFamily])
	}
	var proto string
	switch k[keyProto] {
	case 6:
		proto = "tcp"
	case 17:
		proto = "udp"
	default:
		return cut.Tuple{}, fmt.Errorf("map key with protocol %d: want tcp or udp", k[keyProto])
	}
	src, _ := netip.AddrFromSlice(k[keySrc : keySrc+alen])
	dst, _ := netip.AddrFromSlice(k[keyDst : keyDst+alen])
	return cut.Tuple{
		Proto:   proto,
		Src:     src.String(),
		Dst:     dst.String(),
		SrcPort: binary.BigEndian.Uint16(k[keySport:]),
		DstPort: binary.BigEndian.Uint16(k[keyDport:]),
	}, nil
}

// TupleStats is what the program recorded for one cut tuple.
type TupleStats struct {
	Tuple    cut.Tuple
	Packets  uint64    // frames dropped since the tuple was cut
	LastSeen time.Time // the last dropped frame; zero when none came
	Since    time.Time // when the tuple was cut
}

// value is the map value in the CPU's own byte order. The program adds to
// packets and stamps lastNS; cutNS is written by Cut alone.
type value struct {
	packets uint64
	lastNS  uint64 // CLOCK_MONOTONIC nanoseconds (bpf_ktime_get_ns); 0: no frame yet
	cutNS   uint64 // CLOCK_MONOTONIC nanoseconds of the Cut
}

func decodeValue(b []byte, order binary.ByteOrder) value {
	return value{packets: order.Uint64(b[0:8]), lastNS: order.Uint64(b[8:16]), cutNS: order.Uint64(b[16:24])}
}

func (v value) encode(order binary.ByteOrder) []byte {
	b := make([]byte, ValueSize)
	order.PutUint64(b[0:], v.packets)
	order.PutUint64(b[8:], v.lastNS)
	order.PutUint64(b[16:], v.cutNS)
	return b
}

// lastActive is the monotonic time of the last frame, or of the cut when
// no frame came: what expiry counts from, as a set element's timeout does.
func (v value) lastActive() time.Duration {
	return time.Duration(max(v.lastNS, v.cutNS))
}

// stats turns the monotonic stamps into wall time, given the monotonic and
// wall clocks read together.
func (v value) stats(t cut.Tuple, monoNow time.Duration, wallNow time.Time) TupleStats {
	wall := func(ns uint64) time.Time {
		if ns == 0 {
			return time.Time{}
		}
		return wallNow.Add(time.Duration(ns) - monoNow)
	}
	return TupleStats{Tuple: t, Packets: v.packets, LastSeen: wall(v.lastNS), Since: wall(v.cutNS)}
}
