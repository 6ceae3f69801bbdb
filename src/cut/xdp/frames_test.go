package xdp

import (
	"encoding/binary"
	"net/netip"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

// frameSpec describes a crafted Ethernet frame of one connection.
type frameSpec struct {
	tuple    cut.Tuple
	vlan     uint16 // 802.1Q VLAN id; 0: untagged
	pppoe    bool   // PPPoE session frame
	ipv4Opts int    // 4-byte words of IPv4 options (IHL = 5 + ipv4Opts)
	fragOff  uint16 // IPv4 fragment offset in 8-byte units; non-zero: not the first fragment
	v6Ext    bool   // IPv6 with a hop-by-hop header before the transport header
	payload  []byte
	dstMAC   [6]byte
	srcMAC   [6]byte
}

// frame builds the bytes of s as they go on the wire. Checksums are left
// zero: the frames are counted where they arrive, never delivered to a
// socket.
func (s frameSpec) frame() []byte {
	src := netip.MustParseAddr(s.tuple.Src)
	dst := netip.MustParseAddr(s.tuple.Dst)
	proto := uint8(17)
	if s.tuple.Proto == "tcp" {
		proto = 6
	}
	l4 := binary.BigEndian.AppendUint16(nil, s.tuple.SrcPort)
	l4 = binary.BigEndian.AppendUint16(l4, s.tuple.DstPort)
	if proto == 6 {
		l4 = append(l4, make([]byte, 16)...)
		l4[12] = 5 << 4 // data offset
		l4[13] = 0x18   // PSH, ACK
	} else {
		l4 = binary.BigEndian.AppendUint16(l4, uint16(8+len(s.payload)))
		l4 = append(l4, 0, 0)
	}
	l4 = append(l4, s.payload...)

	var l3 []byte
	etherType, pppProto := uint16(etherIPv4), uint16(pppIPv4)
	if src.Is4() {
		ihl := 5 + s.ipv4Opts
		h := make([]byte, 4*ihl)
		h[0] = 0x40 | byte(ihl)
		binary.BigEndian.PutUint16(h[2:], uint16(len(h)+len(l4)))
		binary.BigEndian.PutUint16(h[6:], s.fragOff&ipFragMask)
		h[8] = 64
		h[9] = proto
		copy(h[12:], src.AsSlice())
		copy(h[16:], dst.AsSlice())
		for i := 20; i < len(h); i++ {
			h[i] = 1 // NOP options
		}
		l3 = append(h, l4...)
	} else {
		etherType, pppProto = etherIPv6, pppIPv6
		h := make([]byte, 40)
		h[0] = 0x60
		next := proto
		var ext []byte
		if s.v6Ext {
			next = 0                                 // hop-by-hop options
			ext = []byte{proto, 0, 1, 4, 0, 0, 0, 0} // PadN
		}
		binary.BigEndian.PutUint16(h[4:], uint16(len(ext)+len(l4)))
		h[6] = next
		h[7] = 64
		copy(h[8:], src.AsSlice())
		copy(h[24:], dst.AsSlice())
		l3 = append(append(h, ext...), l4...)
	}

	f := append(append([]byte{}, s.dstMAC[:]...), s.srcMAC[:]...)
	if s.vlan != 0 {
		f = binary.BigEndian.AppendUint16(f, etherVLAN)
		f = binary.BigEndian.AppendUint16(f, s.vlan)
	}
	if s.pppoe {
		f = binary.BigEndian.AppendUint16(f, etherPPPoE)
		f = append(f, 0x11, 0x00)                    // version/type, code: session data
		f = binary.BigEndian.AppendUint16(f, 0x0042) // session id
		f = binary.BigEndian.AppendUint16(f, uint16(2+len(l3)))
		f = binary.BigEndian.AppendUint16(f, pppProto)
	} else {
		f = binary.BigEndian.AppendUint16(f, etherType)
	}
	f = append(f, l3...)
	for len(f) < 60 {
		f = append(f, 0) // Ethernet minimum
	}
	return f
}
