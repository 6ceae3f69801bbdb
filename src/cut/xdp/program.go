package xdp

import "encoding/binary"

// XDP verdicts.
const (
	xdpDrop = 1
	xdpPass = 2
)

// Ethernet types and PPP protocols the program follows.
const (
	etherIPv4   = 0x0800
	etherIPv6   = 0x86dd
	etherVLAN   = 0x8100 // 802.1Q
	etherQinQ   = 0x88a8 // 802.1ad outer tag, taken as the one tag
	etherPPPoE  = 0x8864 // session stage
	pppIPv4     = 0x0021
	pppIPv6     = 0x0057
	ipFragMask  = 0x1fff // fragment offset bits of IPv4's flags/offset field
	protoTCP    = 6
	protoUDP    = 17
	keyOnStack  = -KeySize // the key lives at fp-40 .. fp-1
	ethHdrLen   = 14
	vlanHdrLen  = 4
	pppoeHdrLen = 8 // PPPoE session header (6) and PPP protocol (2)
	ipv4MinLen  = 20
	ipv6HdrLen  = 40
)

// program builds the cut program for the map with file descriptor mapFD.
//
// Packet offsets stay constant until IPv4's header length, which is added
// as a multiple of 4 from 20 to 60; every access is preceded by a bounds
// check against data_end on the same pointer, as the verifier wants. With
// the kernel's NET_IP_ALIGN of 2 every 2- and 4-byte load is aligned, so
// the program also loads on CPUs without efficient unaligned access (MIPS)
// and under BPF_F_STRICT_ALIGNMENT. Loads of multi-byte header fields are
// compared with constants in the CPU's order (n16); address and port bytes
// are copied into the key unchanged, so the key is in network byte order.
//
// With fwd, frames the cut lets pass go on to the forward stage.
func program(mapFD int32, fwd *forwardSpec, order binary.ByteOrder) ([]byte, error) {
	n16 := func(v uint16) int32 { return int32(order.Uint16([]byte{byte(v >> 8), byte(v)})) }
	var a asm
	// r6 = ctx, r7 = cursor into the frame, r8 = data_end, r3 = next type.
	a.mov(r6, r1)
	a.load(sizeW, r7, r6, 0) // xdp_md.data
	a.load(sizeW, r8, r6, 4) // xdp_md.data_end
	for off := int16(keyOnStack); off < 0; off += 8 {
		a.storeImm(sizeDW, r10, off, 0)
	}

	// Ethernet.
	a.need(ethHdrLen)
	a.load(sizeH, r3, r7, 12)
	a.mov(r7, r2)

	// One VLAN tag.
	a.jumpImm(jmpJEQ, r3, n16(etherVLAN), "vlan")
	a.jumpImm(jmpJNE, r3, n16(etherQinQ), "pppoe?")
	a.at("vlan")
	a.need(vlanHdrLen)
	a.load(sizeH, r3, r7, 2)
	a.mov(r7, r2)

	// PPPoE session frames carrying IPv4 or IPv6.
	a.at("pppoe?")
	a.jumpImm(jmpJNE, r3, n16(etherPPPoE), "l3")
	a.need(pppoeHdrLen)
	a.load(sizeB, r4, r7, 0) // version 1, type 1
	a.jumpImm(jmpJNE, r4, 0x11, "pass")
	a.load(sizeB, r4, r7, 1) // code 0: session data
	a.jumpImm(jmpJNE, r4, 0, "pass")
	a.load(sizeH, r3, r7, 6)
	a.mov(r7, r2)
	a.jumpImm(jmpJEQ, r3, n16(pppIPv4), "ipv4")
	a.jumpImm(jmpJEQ, r3, n16(pppIPv6), "ipv6")
	a.goTo("pass")

	a.at("l3")
	a.jumpImm(jmpJEQ, r3, n16(etherIPv4), "ipv4")
	a.jumpImm(jmpJNE, r3, n16(etherIPv6), "pass")

	// IPv6: the fixed header; a first next header other than TCP or UDP
	// (an extension header) passes.
	a.at("ipv6")
	a.need(ipv6HdrLen)
	a.load(sizeB, r5, r7, 6)
	a.tcpOrUDPKey(r5, 6, "ipv6 l4")
	for i := int16(0); i < 16; i += 4 {
		a.load(sizeW, r1, r7, 8+i)
		a.store(sizeW, r10, keyOnStack+keySrc+i, r1)
		a.load(sizeW, r1, r7, 24+i)
		a.store(sizeW, r10, keyOnStack+keyDst+i, r1)
	}
	a.mov(r7, r2)
	a.goTo("ports")

	// IPv4: version 4, header length from IHL; fragments after the first
	// carry no ports and pass.
	a.at("ipv4")
	a.need(ipv4MinLen)
	a.load(sizeB, r4, r7, 0)
	a.mov(r5, r4)
	a.rshImm(r5, 4)
	a.jumpImm(jmpJNE, r5, 4, "pass")
	a.andImm(r4, 0x0f)
	a.jumpImm(jmpJLT, r4, 5, "pass")
	a.lshImm(r4, 2)
	a.load(sizeH, r5, r7, 6)
	a.andImm(r5, n16(ipFragMask))
	a.jumpImm(jmpJNE, r5, 0, "pass")
	a.load(sizeB, r5, r7, 9)
	a.tcpOrUDPKey(r5, 4, "ipv4 l4")
	a.load(sizeW, r1, r7, 12)
	a.store(sizeW, r10, keyOnStack+keySrc, r1)
	a.load(sizeW, r1, r7, 16)
	a.store(sizeW, r10, keyOnStack+keyDst, r1)
	a.add(r7, r4)

	// TCP and UDP both start with the two ports.
	a.at("ports")
	a.need(4)
	a.load(sizeH, r1, r7, 0)
	a.store(sizeH, r10, keyOnStack+keySport, r1)
	a.load(sizeH, r1, r7, 2)
	a.store(sizeH, r10, keyOnStack+keyDport, r1)

	// Look the key up; only a found value is touched, never a key added.
	a.loadMap(r1, mapFD)
	a.mov(r2, r10)
	a.addImm(r2, keyOnStack)
	a.call(helperMapLookupElem)
	a.jumpImm(jmpJEQ, r0, 0, "pass")
	a.mov(r6, r0)
	a.movImm(r1, 1)
	a.atomicAdd64(r6, 0, r1)
	a.call(helperKtimeGetNS)
	a.store(sizeDW, r6, 8, r0)
	a.movImm(r0, xdpDrop)
	a.exit()

	a.at("pass")
	if fwd == nil {
		a.movImm(r0, xdpPass)
		a.exit()
	} else if err := a.forwardStage(&fwd.layout, fwd.maps, order); err != nil {
		return nil, err
	}
	return a.assemble(order)
}

// need passes the frame unless n bytes from the cursor r7 are inside it:
// the bounds check against data_end the verifier wants before every read.
// It leaves r2 at the cursor plus n, where the next header starts.
func (a *asm) need(n int32) {
	a.mov(r2, r7)
	a.addImm(r2, n)
	a.jump(jmpJGT, r2, r8, "pass")
}

// tcpOrUDPKey passes a frame whose L4 protocol (in register proto) is
// neither TCP nor UDP, and puts family and protocol in the key on the
// stack for the others, from label on.
func (a *asm) tcpOrUDPKey(proto uint8, family int32, label string) {
	a.jumpImm(jmpJEQ, proto, protoTCP, label)
	a.jumpImm(jmpJNE, proto, protoUDP, "pass")
	a.at(label)
	a.storeImm(sizeB, r10, keyOnStack+keyFamily, family)
	a.store(sizeB, r10, keyOnStack+keyProto, proto)
}
