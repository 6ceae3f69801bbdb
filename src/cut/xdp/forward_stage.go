//go:build !mips && !mipsle

package xdp

import (
	"encoding/binary"
	"fmt"
)

// The forward stage's code, for the CPUs whose kernel JIT calls kfuncs;
// see forward_nokfunc.go for 32-bit MIPS.

func (l *Layout) check() error {
	if l.TupleSize <= 0 || l.TupleSize > maxTuple {
		return fmt.Errorf("struct flow_offload_tuple of %d bytes: the forward stage handles up to %d", l.TupleSize, maxTuple)
	}
	for name, off := range map[string]int16{"mtu": l.MTU, "out.h_source": l.HSource, "out.h_dest": l.HDest, "src_port": l.Sport, "dst_port": l.Dport} {
		if off%2 != 0 || off < 0 || off+2 > l.TupleSize {
			return fmt.Errorf("flow_offload_tuple.%s at byte %d: the forward stage needs it 2-aligned inside the tuple", name, off)
		}
	}
	for name, off := range map[string]int16{"src": l.Src, "dst": l.Dst, "out.ifidx": l.OutIfidx, "iifidx": l.Iifidx} {
		if off%4 != 0 || off < 0 || off+4 > l.TupleSize {
			return fmt.Errorf("flow_offload_tuple.%s at byte %d: the forward stage needs it 4-aligned inside the tuple", name, off)
		}
	}
	return nil
}

func roundUp8(n int16) int16 { return (n + 7) &^ 7 }

// forwardStage emits the stage where the caller's label stands; it ends
// every frame with an exit. r6 holds the context on entry.
func (a *asm) forwardStage(l *Layout, maps forwardMaps, order binary.ByteOrder) error {
	if err := l.check(); err != nil {
		return err
	}
	n16 := func(v uint16) int32 { return int32(order.Uint16([]byte{byte(v >> 8), byte(v)})) }
	own := optsAt - roundUp8(l.TupleSize)
	other := own - roundUp8(l.TupleSize)
	newAt := other - 40
	egAt := newAt - 16
	a.load(sizeW, r7, r6, 0) // data
	a.load(sizeW, r8, r6, 4) // data_end
	a.needTo(ethHdrLen, "fpass")
	a.load(sizeH, r3, r7, 12)
	a.jumpImm(jmpJEQ, r3, n16(etherIPv4), "f4")
	a.jumpImm(jmpJEQ, r3, n16(etherIPv6), "f6")
	a.goTo("fpass")
	for _, v6 := range []bool{false, true} {
		a.forwardFamily(l, maps, v6, n16, own, other, newAt, egAt)
	}
	a.at("fgive")
	a.count(maps.stats, statPassed, "fpass")
	a.goTo("fpass")
	a.at("fmiss")
	a.count(maps.stats, statMissed, "fpass")
	a.at("fpass")
	a.movImm(r0, xdpPass)
	a.exit()
	return nil
}

// forwardFamily emits one family's path from label f4 or f6.
func (a *asm) forwardFamily(l *Layout, maps forwardMaps, v6 bool, n16 func(uint16) int32, own, other, newAt, egAt int16) {
	s := "4"
	ip, l4, addrs, addrLen := int16(ethHdrLen), int16(ethHdrLen+ipv4MinLen), int16(ethHdrLen+12), int16(4)
	if v6 {
		s, l4, addrs, addrLen = "6", ethHdrLen+ipv6HdrLen, ethHdrLen+8, 16
	}
	lbl := func(name string) string { return name + s }
	a.at(lbl("f"))
	a.needTo(int32(l4+8), "fpass") // the L3 header and a UDP header
	var proto int16
	if v6 {
		proto = ip + 6
		a.load(sizeB, r1, r7, ip+7) // hop limit
		a.jumpImm(jmpJLT, r1, 2, "fpass")
		a.load(sizeH, r1, r7, ip+4) // payload length
		a.fromBE16(r1)
		a.addImm(r1, ipv6HdrLen)
	} else {
		proto = ip + 9
		a.load(sizeB, r1, r7, ip) // version 4, no options
		a.jumpImm(jmpJNE, r1, 0x45, "fpass")
		a.load(sizeH, r1, r7, ip+6) // MF and fragment offset
		a.andImm(r1, n16(0x3fff))
		a.jumpImm(jmpJNE, r1, 0, "fpass")
		a.load(sizeB, r1, r7, ip+8) // TTL
		a.jumpImm(jmpJLT, r1, 2, "fpass")
		a.load(sizeH, r1, r7, ip+2) // total length
		a.fromBE16(r1)
	}
	a.store(sizeW, r10, lenAt, r1)
	a.load(sizeB, r5, r7, proto)
	a.jumpImm(jmpJEQ, r5, protoUDP, lbl("tuple"))
	a.jumpImm(jmpJNE, r5, protoTCP, "fpass")
	a.needTo(int32(l4+20), "fpass")
	a.load(sizeB, r1, r7, l4+13) // TCP flags: FIN and RST go to the flowtable, which tears down
	a.jumpImm(jmpJSET, r1, tcpFinRst, "fpass")

	family := int32(afINET)
	if v6 {
		family = afINET6
	}
	a.at(lbl("tuple"))
	a.fibTuple(family, proto, r7, l4, addrs, addrLen)
	a.storeImm(sizeW, r10, optsAt, 0)
	a.mov(r1, r6)
	a.mov(r2, r10)
	a.addImm(r2, fibAt)
	a.mov(r3, r10)
	a.addImm(r3, optsAt)
	a.movImm(r4, 4) // NF_BPF_FLOWTABLE_OPTS_SZ
	a.callKfunc(l.KfuncID, l.KfuncFDIndex)
	a.jumpImm(jmpJEQ, r0, 0, "fmiss")
	a.mov(r9, r0)

	// Copy this direction's tuple, then the other's: the flow keeps both
	// tuplehash entries side by side, this one first when dir is 0. From
	// here a frame the stage gives up on is counted as passed.
	a.readKernel(own, l.TupleSize, r9, l.Tuple)
	a.bitfield(r1, own, l.EncapNum)
	a.jumpImm(jmpJNE, r1, 0, "fgive")
	if l.TunNum.Width > 0 {
		a.bitfield(r1, own, l.TunNum)
		a.jumpImm(jmpJNE, r1, 0, "fgive")
	}
	a.load(sizeH, r1, r10, own+l.MTU)
	a.load(sizeW, r2, r10, lenAt)
	a.jump(jmpJGT, r2, r1, "fgive")
	a.bitfield(r1, own, l.Dir)
	a.jumpImm(jmpJNE, r1, 0, lbl("reply"))
	a.readKernel(other, l.TupleSize, r9, l.Tuple+l.HashSize)
	a.goTo(lbl("other"))
	a.at(lbl("reply"))
	a.readKernel(other, l.TupleSize, r9, l.Tuple-l.HashSize)
	a.at(lbl("other"))
	// Encapsulation to push on the way out is the other tuple's.
	a.bitfield(r1, other, l.EncapNum)
	a.jumpImm(jmpJNE, r1, 0, "fgive")
	if l.TunNum.Width > 0 {
		a.bitfield(r1, other, l.TunNum)
		a.jumpImm(jmpJNE, r1, 0, "fgive")
	}

	// The header after NAT is the other direction's tuple reversed: source
	// = its destination, and so on; without NAT that is this frame's own.
	for i := int16(0); i < addrLen; i += 4 {
		a.load(sizeW, r1, r10, other+l.Dst+i)
		a.store(sizeW, r10, newAt+i, r1)
		a.load(sizeW, r1, r10, other+l.Src+i)
		a.store(sizeW, r10, newAt+addrLen+i, r1)
	}
	a.load(sizeH, r1, r10, other+l.Dport)
	a.store(sizeH, r10, newAt+2*addrLen, r1)
	a.load(sizeH, r1, r10, other+l.Sport)
	a.store(sizeH, r10, newAt+2*addrLen+2, r1)

	// Where it goes: a direct transmit (bridge, VLAN, DSA paths) names the
	// device and both MAC addresses; a neighbour transmit (a plain Ethernet
	// device) sends by the route, whose device is where the other
	// direction comes in (its iifidx), and the neighbour's address, which
	// the kernel's FIB lookup gives for the translated addresses.
	a.bitfield(r1, own, l.XmitType)
	a.jumpImm(jmpJEQ, r1, l.XmitNeigh, lbl("neigh"))
	a.jumpImm(jmpJNE, r1, l.XmitDirect, "fgive")
	a.load(sizeW, r1, r10, own+l.OutIfidx)
	a.store(sizeW, r10, egAt, r1)
	for i := int16(0); i < 6; i += 2 {
		a.load(sizeH, r1, r10, own+l.HDest+i)
		a.store(sizeH, r10, egAt+egDst+i, r1)
		a.load(sizeH, r1, r10, own+l.HSource+i)
		a.store(sizeH, r10, egAt+egSrc+i, r1)
	}
	a.goTo(lbl("csum"))
	a.at(lbl("neigh"))
	a.fibTuple(family, proto, r10, newAt+2*addrLen, newAt, addrLen)
	a.load(sizeW, r1, r10, lenAt)
	a.store(sizeH, r10, fibAt+6, r1) // tot_len, in the CPU's order
	a.mov(r1, r6)
	a.mov(r2, r10)
	a.addImm(r2, fibAt)
	a.movImm(r3, fibSize)
	a.movImm(r4, 0)
	a.call(helperFibLookup)
	a.jumpImm(jmpJNE, r0, 0, "fgive") // no route, no neighbour yet, over the MTU, ...
	a.load(sizeW, r1, r10, fibAt+8)   // the route's device
	a.load(sizeW, r2, r10, other+l.Iifidx)
	a.jump(jmpJNE, r1, r2, "fgive") // another device than the flow's route: policy routing decides
	a.store(sizeW, r10, egAt, r1)
	for i := int16(0); i < 6; i += 2 {
		a.load(sizeH, r1, r10, fibAt+58+i) // dmac
		a.store(sizeH, r10, egAt+egDst+i, r1)
		a.load(sizeH, r1, r10, fibAt+52+i) // smac
		a.store(sizeH, r10, egAt+egSrc+i, r1)
	}

	// Only a device in the redirect map takes the frame; for any other the
	// frame must reach the kernel as it came in. bpf_redirect_map only
	// records the target (the driver sends once the program returns
	// XDP_REDIRECT), so it is asked before the frame changes.
	a.at(lbl("csum"))
	a.loadMap(r1, maps.redirect)
	a.load(sizeW, r2, r10, egAt)
	a.movImm(r3, xdpPass) // a device not in the map: the kernel sends the frame
	a.call(helperRedirectMap)
	a.jumpImm(jmpJNE, r0, xdpRedirect, "fgive")

	// The checksums' change: addresses and ports (TCP and UDP cover both
	// through the pseudo-header), addresses alone for IPv4's header. The
	// ports follow the addresses in the frame (no IPv4 options).
	a.csumDiff(addrs, 2*addrLen+4, newAt)
	a.mov32(r9, r0)
	if !v6 {
		a.csumDiff(addrs, 2*addrLen, newAt)
		a.mov32(r1, r0)
		// TTL - 1 lowers the TTL/protocol word by 0x0100 (network order).
		a.addImm(r1, 0xffff-n16(0x0100))
		a.load(sizeH, r2, r7, ip+10)
		a.applyCsum(r2, r1)
		a.store(sizeH, r7, ip+10, r2)
		a.load(sizeB, r1, r7, ip+8)
		a.addImm(r1, -1)
		a.store(sizeB, r7, ip+8, r1)
	} else {
		a.load(sizeB, r1, r7, ip+7)
		a.addImm(r1, -1)
		a.store(sizeB, r7, ip+7, r1)
	}
	a.load(sizeB, r5, r7, proto)
	a.jumpImm(jmpJEQ, r5, protoUDP, lbl("udp"))
	a.needTo(int32(l4+20), "fpass")
	a.load(sizeH, r2, r7, l4+16)
	a.applyCsum(r2, r9)
	a.store(sizeH, r7, l4+16, r2)
	a.goTo(lbl("rewrite"))
	a.at(lbl("udp"))
	a.load(sizeH, r2, r7, l4+6)
	a.jumpImm(jmpJEQ, r2, 0, lbl("rewrite")) // IPv4 UDP without a checksum
	a.applyCsum(r2, r9)
	a.jumpImm(jmpJNE, r2, 0, lbl("udpsum"))
	a.movImm(r2, 0xffff) // a computed 0 is sent as all ones
	a.at(lbl("udpsum"))
	a.store(sizeH, r7, l4+6, r2)

	a.at(lbl("rewrite"))
	for i := int16(0); i < 2*addrLen; i += 4 {
		a.load(sizeW, r1, r10, newAt+i)
		a.store(sizeW, r7, addrs+i, r1)
	}
	for i := int16(0); i < 4; i += 2 {
		a.load(sizeH, r1, r10, newAt+2*addrLen+i)
		a.store(sizeH, r7, l4+i, r1)
	}
	for i := int16(0); i < 12; i += 2 {
		a.load(sizeH, r1, r10, egAt+egDst+i)
		a.store(sizeH, r7, i, r1)
	}
	a.count(maps.stats, statForwarded, lbl("sent"))
	a.at(lbl("sent"))
	a.movImm(r0, xdpRedirect)
	a.exit()
}

// fibTuple fills struct bpf_fib_lookup on the stack as the kfunc and
// bpf_fib_lookup read it: family, l4_protocol (from the frame), sport and
// dport at from+ports, the ingress ifindex, the source and destination
// addresses at from+addrs, at 16 and 32; from is the frame (r7) or the
// stack (r10). Calls take r5, so the protocol is read again.
func (a *asm) fibTuple(family int32, proto int16, from uint8, ports, addrs, addrLen int16) {
	for off := int16(fibAt); off < fibAt+fibSize; off += 8 {
		a.storeImm(sizeDW, r10, off, 0)
	}
	a.storeImm(sizeB, r10, fibAt, family)
	a.load(sizeB, r5, r7, proto)
	a.store(sizeB, r10, fibAt+1, r5)
	a.load(sizeH, r1, from, ports)
	a.store(sizeH, r10, fibAt+2, r1)
	a.load(sizeH, r1, from, ports+2)
	a.store(sizeH, r10, fibAt+4, r1)
	a.load(sizeW, r1, r6, 12) // xdp_md.ingress_ifindex
	a.store(sizeW, r10, fibAt+8, r1)
	for i := int16(0); i < addrLen; i += 4 {
		a.load(sizeW, r1, from, addrs+i)
		a.store(sizeW, r10, fibAt+16+i, r1)
		a.load(sizeW, r1, from, addrs+addrLen+i)
		a.store(sizeW, r10, fibAt+32+i, r1)
	}
}

// needTo jumps to label unless n bytes from the cursor r7 are inside the
// frame; it leaves r2 at the cursor plus n.
func (a *asm) needTo(n int32, label string) {
	a.mov(r2, r7)
	a.addImm(r2, n)
	a.jump(jmpJGT, r2, r8, label)
}

// readKernel copies size bytes at ptr+off of kernel memory to the stack at
// at, and passes the frame when the read fails.
func (a *asm) readKernel(at, size int16, ptr uint8, off int16) {
	a.mov(r1, r10)
	a.addImm(r1, int32(at))
	a.movImm(r2, int32(size))
	a.mov(r3, ptr)
	a.addImm(r3, int32(off))
	a.call(helperProbeReadKernel)
	a.jumpImm(jmpJNE, r0, 0, "fpass")
}

// bitfield loads a bitfield of the tuple copied to the stack at base.
func (a *asm) bitfield(dst uint8, base int16, f Bitfield) {
	a.load(sizeB, dst, r10, base+f.Byte)
	if f.Shift > 0 {
		a.rshImm(dst, int32(f.Shift))
	}
	a.andImm(dst, int32(1)<<f.Width-1)
}

// csumDiff: r0 = bpf_csum_diff(frame+at, n, stack newAt, n, 0), the one's
// complement sum of the change from the frame's bytes to the new ones.
func (a *asm) csumDiff(at, n, newAt int16) {
	a.mov(r1, r7)
	a.addImm(r1, int32(at))
	a.movImm(r2, int32(n))
	a.mov(r3, r10)
	a.addImm(r3, int32(newAt))
	a.movImm(r4, int32(n))
	a.movImm(r5, 0)
	a.call(helperCsumDiff)
}

// applyCsum updates the 16-bit checksum in sum by the 32-bit change in
// diff (RFC 1624: ~(~sum + diff), folded). Both are in the CPU's order,
// as one's complement sums may be.
func (a *asm) applyCsum(sum, diff uint8) {
	a.xorImm(sum, 0xffff)
	a.add(sum, diff)
	for i := 0; i < 3; i++ {
		a.mov(r3, sum)
		a.rshImm(r3, 16)
		a.andImm(sum, 0xffff)
		a.add(sum, r3)
	}
	a.xorImm(sum, 0xffff)
}

// count adds one to the per-CPU counter key of the stats map; next is the
// label the caller puts on the instruction after it.
func (a *asm) count(statsFD int32, key int32, next string) {
	a.storeImm(sizeW, r10, lenAt, key)
	a.loadMap(r1, statsFD)
	a.mov(r2, r10)
	a.addImm(r2, lenAt)
	a.call(helperMapLookupElem)
	a.jumpImm(jmpJEQ, r0, 0, next)
	a.load(sizeDW, r1, r0, 0)
	a.addImm(r1, 1)
	a.store(sizeDW, r0, 0, r1)
}
