package cut

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// Lengths of the set keys. nftables pads every part of a concatenation to
// a 4-byte register: addr . addr . proto(1+3) . port(2+2) . port(2+2).
const (
	KeyLen4 = 4 + 4 + 4 + 4 + 4
	KeyLen6 = 16 + 16 + 4 + 4 + 4
)

// ProtoNumber maps "tcp"/"udp" to their IP protocol numbers; the cut sets
// hold nothing else.
func ProtoNumber(proto string) (uint8, error) {
	switch proto {
	case "tcp":
		return 6, nil
	case "udp":
		return 17, nil
	}
	return 0, fmt.Errorf("proto %q: the cut handles tcp and udp", proto)
}

// ParseTuple checks a tuple and returns its addresses.
func ParseTuple(t Tuple) (src, dst netip.Addr, proto uint8, err error) {
	if proto, err = ProtoNumber(t.Proto); err != nil {
		return
	}
	if src, err = netip.ParseAddr(t.Src); err != nil {
		err = fmt.Errorf("src %q: %w", t.Src, err)
		return
	}
	if dst, err = netip.ParseAddr(t.Dst); err != nil {
		err = fmt.Errorf("dst %q: %w", t.Dst, err)
		return
	}
	src, dst = src.Unmap(), dst.Unmap()
	if src.Is4() != dst.Is4() {
		err = fmt.Errorf("src %s and dst %s are of different families", src, dst)
	}
	return
}

// Key encodes a tuple as the key of cut4 (v6 false) or cut6 (v6 true).
func Key(t Tuple) (key []byte, v6 bool, err error) {
	src, dst, proto, err := ParseTuple(t)
	if err != nil {
		return nil, false, err
	}
	v6 = src.Is6()
	a, b := src.AsSlice(), dst.AsSlice()
	key = make([]byte, 0, KeyLen6)
	key = append(key, a...)
	key = append(key, b...)
	key = append(key, proto, 0, 0, 0)
	key = binary.BigEndian.AppendUint16(key, t.SrcPort)
	key = append(key, 0, 0)
	key = binary.BigEndian.AppendUint16(key, t.DstPort)
	key = append(key, 0, 0)
	return key, v6, nil
}

// DecodeKey is the inverse of Key, for reading the kernel's elements.
func DecodeKey(key []byte) (Tuple, error) {
	var alen int
	switch len(key) {
	case KeyLen4:
		alen = 4
	case KeyLen6:
		alen = 16
	default:
		return Tuple{}, fmt.Errorf("set key of %d bytes: want %d (IPv4) or %d (IPv6)", len(key), KeyLen4, KeyLen6)
	}
	src, _ := netip.AddrFromSlice(key[:alen])
	dst, _ := netip.AddrFromSlice(key[alen : 2*alen])
	rest := key[2*alen:]
	var proto string
	switch rest[0] {
	case 6:
		proto = "tcp"
	case 17:
		proto = "udp"
	default:
		return Tuple{}, fmt.Errorf("set key with protocol %d: want tcp or udp", rest[0])
	}
	return Tuple{
		Proto:   proto,
		Src:     src.String(),
		Dst:     dst.String(),
		SrcPort: binary.BigEndian.Uint16(rest[4:6]),
		DstPort: binary.BigEndian.Uint16(rest[8:10]),
	}, nil
}
