//go:build !mips && !mipsle

package xdp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

// The forward stage runs in vm against a fake kernel: a flowtable of
// struct flow_offload laid out in kernel memory by a Layout (the program
// may read it only through bpf_probe_read_kernel), the kfunc that looks a
// frame's tuple up in it, a FIB answer the test sets, the per-CPU stats
// array and the redirect map of the devices that run the program.

const (
	baseStats    = 0x6000_0000 // the stats map's u64 values
	baseKernel   = 0x7000_0000 // flow i's struct flow_offload at baseKernel + i*kernelStride
	kernelStride = 0x1000
	testStatsFD  = 4
	testRedirFD  = 5
	testKfuncID  = 0x1d2e
	eNOENT       = 2

	// Where Linux 6.12 keeps l3proto and l4proto in struct
	// flow_offload_tuple; the program has no use for them, the fake
	// memory holds them for realism.
	l3protoAt = 40
	l4protoAt = 41

	xmitXFRM   = 2
	xmitTC     = 4
	fibNoNeigh = 7 // BPF_FIB_LKUP_RET_NO_NEIGH
)

// bitAt places a bitfield the way bitfieldOf does for a kernel of the
// given byte order: bit counts from the byte's first allocated bit, which
// is the least significant on little-endian and the most significant on
// big-endian.
func bitAt(byteOff int16, bit, width uint8, order binary.ByteOrder) Bitfield {
	f := Bitfield{Byte: byteOff, Shift: bit, Width: width}
	if isBigEndian(order) {
		f.Shift = 8 - bit - width
	}
	return f
}

// layout612 is struct flow_offload_tuple(_rhash) of Linux 6.12 on a 64-bit
// kernel of the given byte order.
func layout612(order binary.ByteOrder) Layout {
	return Layout{
		KfuncID: testKfuncID, KfuncFDIndex: 1,
		HashSize: 88, Tuple: 8, TupleSize: 80,
		Src: 0, Dst: 16, Sport: 32, Dport: 34,
		Dir: bitAt(50, 0, 2, order), XmitType: bitAt(50, 2, 3, order), EncapNum: bitAt(50, 5, 2, order),
		MTU: 52, Iifidx: 36, OutIfidx: 56, HSource: 64, HDest: 70,
		XmitNeigh: 1, XmitDirect: 3,
	}
}

// ftTuple is one direction of a flowtable entry.
type ftTuple struct {
	src, dst     netip.Addr
	sport, dport uint16
	iif          int32
	xmit         uint8
	encap, tun   uint8
	mtu          uint16
	out          uint32 // out.ifidx of a direct transmit
	hSource      [6]byte
	hDest        [6]byte
}

// fakeFlow is a struct flow_offload: the original direction, then the reply.
type fakeFlow struct {
	proto uint8
	t     [2]ftTuple
}

type fibAnswer struct {
	ret        uint64
	ifindex    uint32
	smac, dmac [6]byte
}

// kernel is what the forward stage calls.
type kernel struct {
	layout           Layout
	order            binary.ByteOrder
	flows            []fakeFlow
	mem              [][]byte // each flow's memory, as the Layout places the fields
	statsFD, redirFD int32
	stats            [statCount * 8]byte
	devices          map[uint32]bool // the redirect map's devices
	fib              fibAnswer

	lookups   [][]byte // the fib tuples the kfunc got
	fibIn     [][]byte // the params of each bpf_fib_lookup
	redirects []uint32 // the ifindexes bpf_redirect_map got
}

func newKernel(order binary.ByteOrder, l Layout, flows ...fakeFlow) *kernel {
	k := &kernel{layout: l, order: order, flows: flows, statsFD: testStatsFD, redirFD: testRedirFD}
	for _, f := range flows {
		k.mem = append(k.mem, k.lay(f))
	}
	return k
}

// lay builds a flow's memory: every byte the Layout names holds its
// field, every other byte (the rhash node, padding, the union's other
// members, the bits beside the bitfields) is junk.
func (k *kernel) lay(f fakeFlow) []byte {
	l := k.layout
	b := bytes.Repeat([]byte{0x5a}, 2*int(l.HashSize))
	for dir, tu := range f.t {
		t := b[int(l.HashSize)*dir+int(l.Tuple):][:l.TupleSize]
		for _, at := range []int16{l.Src, l.Dst} {
			clear(t[at : at+16])
		}
		copy(t[l.Src:], tu.src.AsSlice())
		copy(t[l.Dst:], tu.dst.AsSlice())
		binary.BigEndian.PutUint16(t[l.Sport:], tu.sport)
		binary.BigEndian.PutUint16(t[l.Dport:], tu.dport)
		k.order.PutUint32(t[l.Iifidx:], uint32(tu.iif))
		t[l3protoAt], t[l4protoAt] = afINET, f.proto
		if tu.src.Is6() {
			t[l3protoAt] = afINET6
		}
		fields := []struct {
			f Bitfield
			v uint8
		}{{l.Dir, uint8(dir)}, {l.XmitType, tu.xmit}, {l.EncapNum, tu.encap}, {l.TunNum, tu.tun}}
		for _, x := range fields {
			if x.f.Width > 0 {
				t[x.f.Byte] = 0xff
			}
		}
		for _, x := range fields {
			if x.f.Width == 0 {
				continue
			}
			mask := byte(1)<<x.f.Width - 1
			if x.v > mask {
				panic(fmt.Sprintf("%d does not fit a bitfield of %d bits", x.v, x.f.Width))
			}
			t[x.f.Byte] = t[x.f.Byte]&^(mask<<x.f.Shift) | x.v<<x.f.Shift
		}
		k.order.PutUint16(t[l.MTU:], tu.mtu)
		if int32(tu.xmit) == l.XmitDirect {
			k.order.PutUint32(t[l.OutIfidx:], tu.out)
			copy(t[l.HSource:], tu.hSource[:])
			copy(t[l.HDest:], tu.hDest[:])
		}
	}
	return b
}

// kfunc is bpf_xdp_flow_lookup: the tuplehash whose tuple is the fib
// tuple's (addresses, ports, protocol, ingress device), or NULL with
// opts->error set.
func (k *kernel) kfunc(m *vm, id int32, fdIndex int16, a [5]uint64) (uint64, error) {
	if id != k.layout.KfuncID || fdIndex != k.layout.KfuncFDIndex {
		return 0, fmt.Errorf("kfunc %d in BTF %d, want bpf_xdp_flow_lookup (%d in %d)", id, fdIndex, k.layout.KfuncID, k.layout.KfuncFDIndex)
	}
	if a[0] != baseCtx {
		return 0, fmt.Errorf("bpf_xdp_flow_lookup with ctx %#x", a[0])
	}
	fib, err := m.mem(a[1], fibSize)
	if err != nil {
		return 0, fmt.Errorf("bpf_xdp_flow_lookup's fib tuple: %v", err)
	}
	opts, err := m.mem(a[2], 4)
	if err != nil {
		return 0, fmt.Errorf("bpf_xdp_flow_lookup's opts: %v", err)
	}
	if a[3] != 4 {
		return 0, fmt.Errorf("bpf_xdp_flow_lookup with opts of %d bytes, want NF_BPF_FLOWTABLE_OPTS_SZ (4)", a[3])
	}
	k.lookups = append(k.lookups, slices.Clone(fib))
	alen := map[byte]int{afINET: 4, afINET6: 16}[fib[0]]
	if alen == 0 {
		return 0, fmt.Errorf("bpf_xdp_flow_lookup of family %d", fib[0])
	}
	src, _ := netip.AddrFromSlice(fib[16 : 16+alen])
	dst, _ := netip.AddrFromSlice(fib[32 : 32+alen])
	sport, dport := binary.BigEndian.Uint16(fib[2:]), binary.BigEndian.Uint16(fib[4:])
	iif := int32(k.order.Uint32(fib[8:]))
	for i, f := range k.flows {
		for dir, tu := range f.t {
			if f.proto == fib[1] && tu.src == src && tu.dst == dst && tu.sport == sport && tu.dport == dport && tu.iif == iif {
				return baseKernel + uint64(i)*kernelStride + uint64(dir)*uint64(k.layout.HashSize), nil
			}
		}
	}
	k.order.PutUint32(opts, uint32(0xffffffff-eNOENT+1)) // -ENOENT
	return 0, nil
}

// helper runs the helpers the forward stage adds.
func (k *kernel) helper(m *vm, id int64, a [5]uint64) (uint64, error) {
	switch id {
	case helperProbeReadKernel:
		return k.probeRead(m, a)
	case helperCsumDiff:
		return k.csumDiff(m, a)
	case helperFibLookup:
		return k.fibLookup(m, a)
	case helperRedirectMap:
		return k.redirectMap(a)
	}
	return 0, fmt.Errorf("helper %d", id)
}

// probeRead is bpf_probe_read_kernel(dst, size, unsafe_ptr), here only
// of a flow's memory: any other read is the program's mistake.
func (k *kernel) probeRead(m *vm, a [5]uint64) (uint64, error) {
	dst, size, src := a[0], a[1], a[2]
	to, err := m.mem(dst, int(size))
	if err != nil {
		return 0, fmt.Errorf("bpf_probe_read_kernel into %v", err)
	}
	for i, b := range k.mem {
		base := baseKernel + uint64(i)*kernelStride
		if src >= base && src+size <= base+uint64(len(b)) {
			copy(to, b[src-base:])
			return 0, nil
		}
	}
	return 0, fmt.Errorf("bpf_probe_read_kernel of %d bytes at %#x, outside every flow", size, src)
}

// csumDiff is bpf_csum_diff(from, from_size, to, to_size, seed) as the
// kernel computes it: csum_partial over ~from and to, the 32-bit words
// read in the CPU's order, folded to 32 bits with end-around carry.
func (k *kernel) csumDiff(m *vm, a [5]uint64) (uint64, error) {
	fromSize, toSize := a[1], a[3]
	if (fromSize|toSize)%4 != 0 || fromSize+toSize > 512 {
		return 0, fmt.Errorf("bpf_csum_diff of %d and %d bytes", fromSize, toSize)
	}
	from, err := m.mem(a[0], int(fromSize))
	if err == nil && fromSize == 0 {
		from = nil
	}
	if err != nil {
		return 0, fmt.Errorf("bpf_csum_diff from %v", err)
	}
	to, err := m.mem(a[2], int(toSize))
	if err != nil {
		return 0, fmt.Errorf("bpf_csum_diff to %v", err)
	}
	sum := uint64(uint32(a[4]))
	for i := 0; i < len(from); i += 4 {
		sum += uint64(^k.order.Uint32(from[i:]))
	}
	for i := 0; i < len(to); i += 4 {
		sum += uint64(k.order.Uint32(to[i:]))
	}
	for sum>>32 != 0 {
		sum = sum&0xffffffff + sum>>32
	}
	return sum, nil
}

// fibLookup is bpf_fib_lookup with the test's answer. The device and the
// MAC addresses are written on failures too (the kernel sets the device
// before it finds no neighbour), so the program must look at the return.
func (k *kernel) fibLookup(m *vm, a [5]uint64) (uint64, error) {
	if a[0] != baseCtx || a[2] != fibSize || a[3] != 0 {
		return 0, fmt.Errorf("bpf_fib_lookup(%#x, _, %d, %#x)", a[0], a[2], a[3])
	}
	p, err := m.mem(a[1], fibSize)
	if err != nil {
		return 0, fmt.Errorf("bpf_fib_lookup params: %v", err)
	}
	k.fibIn = append(k.fibIn, slices.Clone(p))
	k.order.PutUint32(p[8:], k.fib.ifindex)
	copy(p[52:58], k.fib.smac[:])
	copy(p[58:64], k.fib.dmac[:])
	return k.fib.ret, nil
}

// redirectMap is bpf_redirect_map(map, ifindex, flags): XDP_REDIRECT for
// a device in the map, else the flags' action bits.
func (k *kernel) redirectMap(a [5]uint64) (uint64, error) {
	if a[0] != mapHandle+uint64(k.redirFD) {
		return 0, fmt.Errorf("bpf_redirect_map on %#x, not the redirect map", a[0])
	}
	if a[2]&^3 != 0 {
		return 0, fmt.Errorf("bpf_redirect_map with flags %#x", a[2])
	}
	k.redirects = append(k.redirects, uint32(a[1]))
	if k.devices[uint32(a[1])] {
		return xdpRedirect, nil
	}
	return a[2] & 3, nil
}

// mapLookup answers bpf_map_lookup_elem in the stats array.
func (k *kernel) mapLookup(m *vm, mapArg, keyAt uint64) (uint64, bool, error) {
	if mapArg != mapHandle+uint64(uint32(k.statsFD)) {
		return 0, false, nil
	}
	r, err := k.statsLookup(m, keyAt)
	return r, true, err
}

// memory is the stats array's values.
func (k *kernel) memory(addr uint64, size int) ([]byte, bool) {
	if addr >= baseStats && addr+uint64(size) <= baseStats+uint64(len(k.stats)) {
		return k.stats[addr-baseStats : addr-baseStats+uint64(size)], true
	}
	return nil, false
}

// statsLookup is the stats array's bpf_map_lookup_elem.
func (k *kernel) statsLookup(m *vm, keyAt uint64) (uint64, error) {
	key, err := m.load(keyAt, 4)
	if err != nil {
		return 0, fmt.Errorf("stats key: %v", err)
	}
	if key >= statCount {
		return 0, nil
	}
	return baseStats + 8*key, nil
}

func (k *kernel) counters() ForwardCounters {
	c := func(i int) uint64 { return k.order.Uint64(k.stats[8*i:]) }
	return ForwardCounters{Forwarded: c(statForwarded), Missed: c(statMissed), Passed: c(statPassed)}
}

// Checksums, computed from the wire bytes alone.

func onesSum(sum uint64, b []byte) uint64 {
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint64(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint64(b[len(b)-1]) << 8
	}
	return sum
}

func fold16(sum uint64) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}

// ipHeaders finds an untagged frame's IP and transport headers.
type ipHeaders struct {
	v4           bool
	ip, l4, end  int // offsets: the IP header, the transport header, the IP packet's end
	proto        byte
	csumAt       int // the transport checksum's offset
	pseudoHeader uint64
}

func parseIP(f []byte) (h ipHeaders, ok bool) {
	if len(f) < 14+40 {
		return h, false
	}
	h.ip = 14
	switch binary.BigEndian.Uint16(f[12:]) {
	case etherIPv4:
		h.v4 = true
		h.l4 = h.ip + 4*int(f[h.ip]&0x0f)
		h.end = h.ip + int(binary.BigEndian.Uint16(f[h.ip+2:]))
		h.proto = f[h.ip+9]
		h.pseudoHeader = onesSum(0, f[h.ip+12:h.ip+20])
	case etherIPv6:
		h.l4 = h.ip + 40
		h.end = h.l4 + int(binary.BigEndian.Uint16(f[h.ip+4:]))
		h.proto = f[h.ip+6]
		h.pseudoHeader = onesSum(0, f[h.ip+8:h.ip+40])
	default:
		return h, false
	}
	switch h.proto {
	case protoTCP:
		h.csumAt = h.l4 + 16
	case protoUDP:
		h.csumAt = h.l4 + 6
	default:
		return h, false
	}
	if h.end > len(f) || h.csumAt+2 > h.end {
		return h, false
	}
	h.pseudoHeader += uint64(h.proto) + uint64(h.end-h.l4)
	return h, true
}

// setChecksums fills the IPv4 header's and the transport checksum.
func setChecksums(f []byte) {
	h, ok := parseIP(f)
	if !ok {
		return
	}
	if h.v4 {
		binary.BigEndian.PutUint16(f[h.ip+10:], 0)
		binary.BigEndian.PutUint16(f[h.ip+10:], ^fold16(onesSum(0, f[h.ip:h.l4])))
	}
	binary.BigEndian.PutUint16(f[h.csumAt:], 0)
	c := ^fold16(onesSum(h.pseudoHeader, f[h.l4:h.end]))
	if c == 0 && h.proto == protoUDP {
		c = 0xffff // RFC 768: a computed zero is sent as all ones
	}
	binary.BigEndian.PutUint16(f[h.csumAt:], c)
}

// checksumsValid verifies the checksums of f from scratch: the one's
// complement sum over each covered range, checksum included, is all ones.
func checksumsValid(f []byte) (ip, l4 bool) {
	h, ok := parseIP(f)
	if !ok {
		return false, false
	}
	ip = !h.v4 || fold16(onesSum(0, f[h.ip:h.l4])) == 0xffff
	l4 = fold16(onesSum(h.pseudoHeader, f[h.l4:h.end])) == 0xffff
	if h.v4 && h.proto == protoUDP && binary.BigEndian.Uint16(f[h.csumAt:]) == 0 {
		l4 = true // no checksum
	}
	return ip, l4
}

// pkt is a frame with valid checksums.
type pkt struct {
	frameSpec
	ttl       byte // IPv4 TTL or IPv6 hop limit; 0: 64
	tcpFlags  byte // 0: PSH, ACK
	df, mf    bool
	noUDPCsum bool
}

func (p pkt) bytes() []byte {
	f := p.frame()
	h, ok := parseIP(f)
	if !ok {
		return f
	}
	if p.ttl != 0 {
		if h.v4 {
			f[h.ip+8] = p.ttl
		} else {
			f[h.ip+7] = p.ttl
		}
	}
	if p.df {
		f[h.ip+6] |= 0x40
	}
	if p.mf {
		f[h.ip+6] |= 0x20
	}
	if h.v4 {
		binary.BigEndian.PutUint16(f[h.ip+4:], 0x3a7c) // an IP ID
	}
	if h.proto == protoTCP {
		copy(f[h.l4+4:], []byte{0x8a, 0x3b, 0x11, 0x07, 0x00, 0x91, 0xfe, 0x52}) // sequence and ack numbers
		binary.BigEndian.PutUint16(f[h.l4+14:], 502)                             // window
		if p.tcpFlags != 0 {
			f[h.l4+13] = p.tcpFlags
		}
	}
	setChecksums(f)
	if p.noUDPCsum {
		binary.BigEndian.PutUint16(f[h.csumAt:], 0)
	}
	return f
}

// The network: a client on the router's LAN device, a server beyond the
// ISP's gateway on its WAN device.
var (
	clientMAC = [6]byte{0x02, 0xc1, 0x1e, 0x47, 0x00, 0x10}
	lanMAC    = [6]byte{0x02, 0x1a, 0x2b, 0x3c, 0x4d, 0x01} // the router's LAN side
	wanMAC    = [6]byte{0x02, 0x9a, 0x8b, 0x7c, 0x6d, 0x02} // the router's WAN side
	gwMAC     = [6]byte{0x02, 0xe0, 0xf1, 0xa2, 0xb3, 0xfe} // the ISP's gateway
	otherMAC  = [6]byte{0x02, 0x77, 0x66, 0x55, 0x44, 0x33}
	fwdData   = []byte("the forward stage, in the driver")
)

const (
	wanIf   = 2
	lanIf   = 3
	otherIf = 5
)

// conn is a connection from the client to the server; public is the
// client's address and mport its port after the router's SNAT (the
// client's own for a connection without NAT).
type conn struct {
	proto                  string
	client, server, public string
	cport, sport, mport    uint16
}

func (c conn) orig() cut.Tuple {
	return cut.Tuple{Proto: c.proto, Src: c.client, Dst: c.server, SrcPort: c.cport, DstPort: c.sport}
}
func (c conn) origNAT() cut.Tuple {
	return cut.Tuple{Proto: c.proto, Src: c.public, Dst: c.server, SrcPort: c.mport, DstPort: c.sport}
}
func (c conn) reply() cut.Tuple { return c.origNAT().Reverse() }
func (c conn) replyNAT() cut.Tuple {
	return c.orig().Reverse()
}

// flow is the flowtable's entry of c with both directions sent by xmit.
func (c conn) flow(xmit uint8) fakeFlow {
	proto := uint8(protoUDP)
	if c.proto == "tcp" {
		proto = protoTCP
	}
	a := netip.MustParseAddr
	return fakeFlow{proto: proto, t: [2]ftTuple{
		{src: a(c.client), dst: a(c.server), sport: c.cport, dport: c.sport, iif: lanIf, xmit: xmit, mtu: 1500, out: wanIf, hSource: wanMAC, hDest: gwMAC},
		{src: a(c.server), dst: a(c.public), sport: c.sport, dport: c.mport, iif: wanIf, xmit: xmit, mtu: 1500, out: lanIf, hSource: lanMAC, hDest: clientMAC},
	}}
}

func (c conn) origIn() pkt {
	return pkt{frameSpec: frameSpec{tuple: c.orig(), payload: fwdData, dstMAC: lanMAC, srcMAC: clientMAC}}
}
func (c conn) origOut() pkt {
	return pkt{frameSpec: frameSpec{tuple: c.origNAT(), payload: fwdData, dstMAC: gwMAC, srcMAC: wanMAC}, ttl: 63}
}
func (c conn) replyIn() pkt {
	return pkt{frameSpec: frameSpec{tuple: c.reply(), payload: fwdData, dstMAC: wanMAC, srcMAC: gwMAC}}
}
func (c conn) replyOut() pkt {
	return pkt{frameSpec: frameSpec{tuple: c.replyNAT(), payload: fwdData, dstMAC: clientMAC, srcMAC: lanMAC}, ttl: 63}
}

var (
	tcp4NAT    = conn{"tcp", "192.168.1.10", "198.51.100.7", "203.0.113.5", 40000, 443, 61000}
	udp4NAT    = conn{"udp", "192.168.1.10", "198.51.100.7", "203.0.113.5", 51000, 53, 62000}
	udp6NAT    = conn{"udp", "fd00:1::10", "2001:db8::7", "2001:db8:ffff::5", 5353, 4500, 60000}
	tcp6Routed = conn{"tcp", "2001:db8:1::10", "2001:db8::7", "2001:db8:1::10", 50000, 443, 50000}
)

// withFlow returns f changed by edit.
func withFlow(f fakeFlow, edit func(*fakeFlow)) fakeFlow {
	edit(&f)
	return f
}

// l3Len is the length of the IP packet in frame f.
func l3Len(f []byte) uint16 {
	h, ok := parseIP(f)
	if !ok {
		panic("not an IP frame")
	}
	return uint16(h.end - h.ip)
}

// fwdCase is one frame through the cut and the forward stage.
type fwdCase struct {
	in       []byte
	ingress  uint32
	flows    []fakeFlow
	fib      fibAnswer
	devices  []uint32 // the redirect map; nil: wanIf and lanIf
	cut      []cut.Tuple
	layout   func(*Layout, binary.ByteOrder)
	verdict  uint64
	out      []byte   // the frame sent; nil: the frame is unchanged
	asked    []uint32 // the devices the program asked bpf_redirect_map for
	lookups  int      // bpf_xdp_flow_lookup calls
	counters ForwardCounters
	fibWant  *cut.Tuple // the tuple the FIB was asked about, with the IP length in fibLen
	fibLen   uint16
}

func (c fwdCase) run(t *testing.T, order binary.ByteOrder) (*vm, *kernel, uint64) {
	t.Helper()
	l := layout612(order)
	if c.layout != nil {
		c.layout(&l, order)
	}
	code, err := program(cutMapFD, &forwardSpec{layout: l, maps: forwardMaps{redirect: testRedirFD, stats: testStatsFD}}, order)
	if err != nil {
		t.Fatal(err)
	}
	k := newKernel(order, l, c.flows...)
	k.fib = c.fib
	k.devices = map[uint32]bool{}
	devices := c.devices
	if devices == nil {
		devices = []uint32{wanIf, lanIf}
	}
	for _, d := range devices {
		k.devices[d] = true
	}
	m := &vm{order: order, frame: slices.Clone(c.in), ingress: c.ingress, kernel: k, cut: map[Key]bool{}}
	for _, tu := range c.cut {
		m.cut[mustKey(t, tu)] = true
	}
	verdict, err := m.run(code)
	if err != nil {
		t.Fatal(err)
	}
	return m, k, verdict
}

func (c fwdCase) check(t *testing.T, order binary.ByteOrder) {
	t.Helper()
	m, k, verdict := c.run(t, order)
	if verdict != c.verdict {
		t.Errorf("verdict %d, want %d", verdict, c.verdict)
	}
	want := c.out
	if want == nil {
		want = c.in
	}
	if !bytes.Equal(m.frame, want) {
		t.Errorf("frame after the program:\n got %x\nwant %x", m.frame, want)
	}
	if c.out != nil {
		if ip, l4 := checksumsValid(m.frame); !ip || !l4 {
			t.Errorf("checksums of the frame sent: IPv4 header valid %v, transport valid %v", ip, l4)
		}
	}
	if !slices.Equal(k.redirects, c.asked) {
		t.Errorf("bpf_redirect_map asked for %v, want %v", k.redirects, c.asked)
	}
	if len(k.lookups) != c.lookups {
		t.Errorf("%d flowtable lookups, want %d", len(k.lookups), c.lookups)
	}
	if got := k.counters(); got != c.counters {
		t.Errorf("counters %+v, want %+v", got, c.counters)
	}
	if c.fibWant == nil {
		if len(k.fibIn) != 0 {
			t.Errorf("bpf_fib_lookup called: %x", k.fibIn)
		}
	} else if len(k.fibIn) != 1 {
		t.Errorf("%d bpf_fib_lookup calls, want 1", len(k.fibIn))
	} else {
		checkFibParams(t, order, k.fibIn[0], *c.fibWant, c.fibLen, c.ingress)
	}
	if m.value != [ValueSize]byte{} {
		t.Errorf("the cut map's value changed to %x", m.value)
	}
}

// checkFibParams verifies the struct bpf_fib_lookup the program passed.
func checkFibParams(t *testing.T, order binary.ByteOrder, p []byte, tu cut.Tuple, l3 uint16, ingress uint32) {
	t.Helper()
	src, dst := netip.MustParseAddr(tu.Src), netip.MustParseAddr(tu.Dst)
	want := make([]byte, fibSize)
	want[0], want[1] = afINET, protoUDP
	if src.Is6() {
		want[0] = afINET6
	}
	if tu.Proto == "tcp" {
		want[1] = protoTCP
	}
	binary.BigEndian.PutUint16(want[2:], tu.SrcPort)
	binary.BigEndian.PutUint16(want[4:], tu.DstPort)
	order.PutUint16(want[6:], l3)
	order.PutUint32(want[8:], ingress)
	copy(want[16:], src.AsSlice())
	copy(want[32:], dst.AsSlice())
	if !bytes.Equal(p, want) {
		t.Errorf("bpf_fib_lookup params:\n got %x\nwant %x", p, want)
	}
}

// Frames of flows the flowtable sends out directly or through a
// neighbour are translated, their checksums updated, and redirected; the
// expected frames are built from scratch with their checksums computed
// anew, in both byte orders.
func TestForwardSendsFlows(t *testing.T) {
	direct, neigh := uint8(3), uint8(1)
	zeroSum := udpZeroSum(udp4NAT)
	cases := map[string]fwdCase{
		// SNAT of a home router: the client's address and port become the
		// router's WAN address and the masqueraded port.
		"ipv4 tcp snat, original direction, direct": {
			in: pkt{frameSpec: tcp4NAT.origIn().frameSpec, df: true}.bytes(), ingress: lanIf,
			flows: []fakeFlow{tcp4NAT.flow(direct)}, verdict: xdpRedirect,
			out:   pkt{frameSpec: tcp4NAT.origOut().frameSpec, ttl: 63, df: true}.bytes(),
			asked: []uint32{wanIf}, lookups: 1, counters: ForwardCounters{Forwarded: 1},
		},
		// The reply: DNAT back to the client's address and port.
		"ipv4 tcp snat, reply direction, direct": {
			in: tcp4NAT.replyIn().bytes(), ingress: wanIf,
			flows: []fakeFlow{tcp4NAT.flow(direct)}, verdict: xdpRedirect, out: tcp4NAT.replyOut().bytes(),
			asked: []uint32{lanIf}, lookups: 1, counters: ForwardCounters{Forwarded: 1},
		},
		"ipv4 tcp at exactly the mtu": {
			in: tcp4NAT.origIn().bytes(), ingress: lanIf,
			flows:   []fakeFlow{withFlow(tcp4NAT.flow(direct), func(f *fakeFlow) { f.t[0].mtu = l3Len(tcp4NAT.origIn().bytes()) })},
			verdict: xdpRedirect, out: tcp4NAT.origOut().bytes(),
			asked: []uint32{wanIf}, lookups: 1, counters: ForwardCounters{Forwarded: 1},
		},
		"ipv4 udp snat, original direction": {
			in: udp4NAT.origIn().bytes(), ingress: lanIf,
			flows: []fakeFlow{udp4NAT.flow(direct)}, verdict: xdpRedirect, out: udp4NAT.origOut().bytes(),
			asked: []uint32{wanIf}, lookups: 1, counters: ForwardCounters{Forwarded: 1},
		},
		"ipv4 udp snat, reply direction": {
			in: udp4NAT.replyIn().bytes(), ingress: wanIf,
			flows: []fakeFlow{udp4NAT.flow(direct)}, verdict: xdpRedirect, out: udp4NAT.replyOut().bytes(),
			asked: []uint32{lanIf}, lookups: 1, counters: ForwardCounters{Forwarded: 1},
		},
		// No UDP checksum stays none.
		"ipv4 udp without a checksum, original direction": {
			in: pkt{frameSpec: udp4NAT.origIn().frameSpec, noUDPCsum: true}.bytes(), ingress: lanIf,
			flows: []fakeFlow{udp4NAT.flow(direct)}, verdict: xdpRedirect,
			out:   pkt{frameSpec: udp4NAT.origOut().frameSpec, ttl: 63, noUDPCsum: true}.bytes(),
			asked: []uint32{wanIf}, lookups: 1, counters: ForwardCounters{Forwarded: 1},
		},
		"ipv4 udp without a checksum, reply direction": {
			in: pkt{frameSpec: udp4NAT.replyIn().frameSpec, noUDPCsum: true}.bytes(), ingress: wanIf,
			flows: []fakeFlow{udp4NAT.flow(direct)}, verdict: xdpRedirect,
			out:   pkt{frameSpec: udp4NAT.replyOut().frameSpec, ttl: 63, noUDPCsum: true}.bytes(),
			asked: []uint32{lanIf}, lookups: 1, counters: ForwardCounters{Forwarded: 1},
		},
		// A datagram whose translated checksum computes to zero: sent as
		// 0xffff (udpZeroSum picks the payload; the test below checks the
		// field).
		"ipv4 udp whose new checksum is zero": {
			in: zeroSum.in, ingress: lanIf,
			flows: []fakeFlow{udp4NAT.flow(direct)}, verdict: xdpRedirect, out: zeroSum.out,
			asked: []uint32{wanIf}, lookups: 1, counters: ForwardCounters{Forwarded: 1},
		},
		"ipv6 udp snat, original direction": {
			in: udp6NAT.origIn().bytes(), ingress: lanIf,
			flows: []fakeFlow{udp6NAT.flow(direct)}, verdict: xdpRedirect, out: udp6NAT.origOut().bytes(),
			asked: []uint32{wanIf}, lookups: 1, counters: ForwardCounters{Forwarded: 1},
		},
		"ipv6 udp snat, reply direction": {
			in: udp6NAT.replyIn().bytes(), ingress: wanIf,
			flows: []fakeFlow{udp6NAT.flow(direct)}, verdict: xdpRedirect, out: udp6NAT.replyOut().bytes(),
			asked: []uint32{lanIf}, lookups: 1, counters: ForwardCounters{Forwarded: 1},
		},
		// Neighbour transmits: the FIB, asked about the translated header,
		// names the device where the other direction comes in and both
		// MAC addresses.
		"ipv6 tcp without nat, neighbour, original direction": {
			in: tcp6Routed.origIn().bytes(), ingress: lanIf,
			flows: []fakeFlow{tcp6Routed.flow(neigh)}, fib: fibAnswer{ifindex: wanIf, smac: wanMAC, dmac: gwMAC},
			verdict: xdpRedirect, out: tcp6Routed.origOut().bytes(),
			asked: []uint32{wanIf}, lookups: 1, counters: ForwardCounters{Forwarded: 1},
			fibWant: tupleRef(tcp6Routed.orig()), fibLen: l3Len(tcp6Routed.origIn().bytes()),
		},
		"ipv6 tcp without nat, neighbour, reply direction": {
			in: tcp6Routed.replyIn().bytes(), ingress: wanIf,
			flows: []fakeFlow{tcp6Routed.flow(neigh)}, fib: fibAnswer{ifindex: lanIf, smac: lanMAC, dmac: clientMAC},
			verdict: xdpRedirect, out: tcp6Routed.replyOut().bytes(),
			asked: []uint32{lanIf}, lookups: 1, counters: ForwardCounters{Forwarded: 1},
			fibWant: tupleRef(tcp6Routed.reply()), fibLen: l3Len(tcp6Routed.replyIn().bytes()),
		},
		"ipv4 tcp snat, neighbour": {
			in: tcp4NAT.origIn().bytes(), ingress: lanIf,
			flows: []fakeFlow{tcp4NAT.flow(neigh)}, fib: fibAnswer{ifindex: wanIf, smac: wanMAC, dmac: gwMAC},
			verdict: xdpRedirect, out: tcp4NAT.origOut().bytes(),
			asked: []uint32{wanIf}, lookups: 1, counters: ForwardCounters{Forwarded: 1},
			fibWant: tupleRef(tcp4NAT.origNAT()), fibLen: l3Len(tcp4NAT.origIn().bytes()),
		},
		"ipv4 udp snat, neighbour, reply direction": {
			in: udp4NAT.replyIn().bytes(), ingress: wanIf,
			flows: []fakeFlow{udp4NAT.flow(neigh)}, fib: fibAnswer{ifindex: lanIf, smac: lanMAC, dmac: clientMAC},
			verdict: xdpRedirect, out: udp4NAT.replyOut().bytes(),
			asked: []uint32{lanIf}, lookups: 1, counters: ForwardCounters{Forwarded: 1},
			fibWant: tupleRef(udp4NAT.replyNAT()), fibLen: l3Len(udp4NAT.replyIn().bytes()),
		},
		// Among other flows, and with a kernel that has tun_num (Linux 7).
		"ipv4 tcp among other flows, with tun_num": {
			in: tcp4NAT.replyIn().bytes(), ingress: wanIf,
			flows:  []fakeFlow{udp4NAT.flow(direct), tcp6Routed.flow(neigh), tcp4NAT.flow(direct)},
			layout: withTunNum, verdict: xdpRedirect, out: tcp4NAT.replyOut().bytes(),
			asked: []uint32{lanIf}, lookups: 1, counters: ForwardCounters{Forwarded: 1},
		},
	}
	for _, o := range orders {
		for name, c := range cases {
			t.Run(o.name+"/"+name, func(t *testing.T) { c.check(t, o.order) })
		}
	}
	// The zero-checksum case is what it claims to be.
	h, _ := parseIP(zeroSum.out)
	if got := binary.BigEndian.Uint16(zeroSum.out[h.csumAt:]); got != 0xffff {
		t.Errorf("the zero-sum datagram's checksum is %#04x, want 0xffff", got)
	}
	if h, _ := parseIP(zeroSum.in); binary.BigEndian.Uint16(zeroSum.in[h.csumAt:]) == 0xffff {
		t.Error("the zero-sum datagram arrives with checksum 0xffff: it proves nothing")
	}
}

func tupleRef(v cut.Tuple) *cut.Tuple { return &v }

// withTunNum gives the layout a tun_num bitfield after in_vlan_ingress.
func withTunNum(l *Layout, order binary.ByteOrder) {
	l.TunNum = bitAt(51, 2, 2, order)
}

type inOut struct{ in, out []byte }

// udpZeroSum builds a datagram of c whose checksum after the SNAT
// computes to zero: two bytes of its payload make the translated
// datagram's sum all ones.
func udpZeroSum(c conn) inOut {
	out := c.origOut()
	out.payload = append([]byte{0, 0}, fwdData...)
	f := out.bytes()
	h, _ := parseIP(f)
	binary.BigEndian.PutUint16(f[h.csumAt:], 0)
	s := fold16(onesSum(h.pseudoHeader, f[h.l4:h.end]))
	binary.BigEndian.PutUint16(out.payload, 0xffff-s)
	in := c.origIn()
	in.payload = out.payload
	return inOut{in.bytes(), out.bytes()}
}

// Frames the stage leaves to the kernel reach it unchanged: those it does
// not look up (not counted), those without a flow (missed), and those of
// a flow it does not send itself (passed).
func TestForwardPassesUnchanged(t *testing.T) {
	direct, neigh := uint8(3), uint8(1)
	flow := []fakeFlow{tcp4NAT.flow(direct)}
	in := func(edit func(*pkt)) []byte {
		p := tcp4NAT.origIn()
		edit(&p)
		return p.bytes()
	}
	edited := func(f fakeFlow, edit func(*fakeFlow)) []fakeFlow { return []fakeFlow{withFlow(f, edit)} }
	icmp := tcp4NAT.origIn().bytes()
	icmp[14+9] = 1
	setChecksums(icmp)
	fragment := pkt{frameSpec: frameSpec{tuple: tcp4NAT.orig(), fragOff: 185, payload: fwdData}}.bytes()
	passed := ForwardCounters{Passed: 1}
	cases := map[string]fwdCase{
		"tcp fin":                  {in: in(func(p *pkt) { p.tcpFlags = 0x11 }), flows: flow},
		"tcp rst":                  {in: in(func(p *pkt) { p.tcpFlags = 0x04 }), flows: flow},
		"tcp fin from the reply":   {in: pkt{frameSpec: tcp4NAT.replyIn().frameSpec, tcpFlags: 0x19}.bytes(), ingress: wanIf, flows: flow},
		"ipv4 options (ihl 6)":     {in: in(func(p *pkt) { p.ipv4Opts = 1 }), flows: flow},
		"ipv4 first fragment (mf)": {in: in(func(p *pkt) { p.mf = true }), flows: flow},
		"ipv4 later fragment":      {in: fragment, flows: flow},
		"ipv4 ttl 1":               {in: in(func(p *pkt) { p.ttl = 1 }), flows: flow},
		"ipv6 hop limit 1":         {in: pkt{frameSpec: tcp6Routed.origIn().frameSpec, ttl: 1}.bytes(), flows: []fakeFlow{tcp6Routed.flow(neigh)}},
		"ipv6 hop-by-hop":          {in: pkt{frameSpec: frameSpec{tuple: tcp6Routed.orig(), v6Ext: true}}.bytes(), flows: []fakeFlow{tcp6Routed.flow(neigh)}},
		"vlan":                     {in: in(func(p *pkt) { p.vlan = 7 }), flows: flow},
		"pppoe":                    {in: in(func(p *pkt) { p.pppoe = true }), flows: flow},
		"icmp":                     {in: icmp, flows: flow},

		"no flow":               {in: tcp4NAT.origIn().bytes(), lookups: 1, counters: ForwardCounters{Missed: 1}},
		"another port's flow":   {in: in(func(p *pkt) { p.tuple.SrcPort++ }), flows: flow, lookups: 1, counters: ForwardCounters{Missed: 1}},
		"another device's flow": {in: tcp4NAT.origIn().bytes(), ingress: otherIf, flows: flow, lookups: 1, counters: ForwardCounters{Missed: 1}},
		"over the mtu": {in: tcp4NAT.origIn().bytes(), lookups: 1, counters: passed,
			flows: edited(tcp4NAT.flow(direct), func(f *fakeFlow) { f.t[0].mtu = l3Len(tcp4NAT.origIn().bytes()) - 1 })},
		"ipv6 over the mtu": {in: tcp6Routed.origIn().bytes(), lookups: 1, counters: passed,
			flows: edited(tcp6Routed.flow(neigh), func(f *fakeFlow) { f.t[0].mtu = l3Len(tcp6Routed.origIn().bytes()) - 1 })},
		"xmit xfrm": {in: tcp4NAT.origIn().bytes(), lookups: 1, counters: passed,
			flows: edited(tcp4NAT.flow(direct), func(f *fakeFlow) { f.t[0].xmit = xmitXFRM })},
		"xmit tc": {in: tcp4NAT.origIn().bytes(), lookups: 1, counters: passed,
			flows: edited(tcp4NAT.flow(direct), func(f *fakeFlow) { f.t[0].xmit = xmitTC })},
		"encap on this direction": {in: tcp4NAT.origIn().bytes(), lookups: 1, counters: passed,
			flows: edited(tcp4NAT.flow(direct), func(f *fakeFlow) { f.t[0].encap = 1 })},
		"encap on the other direction": {in: tcp4NAT.origIn().bytes(), lookups: 1, counters: passed,
			flows: edited(tcp4NAT.flow(direct), func(f *fakeFlow) { f.t[1].encap = 1 })},
		"encap on the other direction of a reply": {in: tcp4NAT.replyIn().bytes(), ingress: wanIf, lookups: 1, counters: passed,
			flows: edited(tcp4NAT.flow(direct), func(f *fakeFlow) { f.t[0].encap = 2 })},
		"tunnel on this direction": {in: tcp4NAT.origIn().bytes(), lookups: 1, counters: passed, layout: withTunNum,
			flows: edited(tcp4NAT.flow(direct), func(f *fakeFlow) { f.t[0].tun = 1 })},
		"tunnel on the other direction": {in: tcp4NAT.origIn().bytes(), lookups: 1, counters: passed, layout: withTunNum,
			flows: edited(tcp4NAT.flow(direct), func(f *fakeFlow) { f.t[1].tun = 1 })},
		// A device that does not run the program cannot take the frame:
		// the kernel gets it as it came.
		"out device not in the redirect map": {in: tcp4NAT.origIn().bytes(), flows: flow, devices: []uint32{lanIf},
			lookups: 1, counters: passed, asked: []uint32{wanIf}},
		"neighbour on another device": {in: tcp6Routed.origIn().bytes(), flows: []fakeFlow{tcp6Routed.flow(neigh)},
			fib: fibAnswer{ifindex: otherIf, smac: otherMAC, dmac: gwMAC}, lookups: 1, counters: passed,
			fibWant: tupleRef(tcp6Routed.orig()), fibLen: l3Len(tcp6Routed.origIn().bytes())},
		"no neighbour": {in: tcp6Routed.origIn().bytes(), flows: []fakeFlow{tcp6Routed.flow(neigh)},
			fib: fibAnswer{ret: fibNoNeigh, ifindex: wanIf, smac: wanMAC, dmac: gwMAC}, lookups: 1, counters: passed,
			fibWant: tupleRef(tcp6Routed.orig()), fibLen: l3Len(tcp6Routed.origIn().bytes())},
	}
	for _, o := range orders {
		for name, c := range cases {
			if c.ingress == 0 {
				c.ingress = lanIf
			}
			if c.verdict == 0 {
				c.verdict = xdpPass
			}
			t.Run(o.name+"/"+name, func(t *testing.T) { c.check(t, o.order) })
		}
	}
}

// A cut frame is dropped by the cut, before the forward stage looks at it.
func TestForwardCutFirst(t *testing.T) {
	for _, o := range orders {
		for _, c := range []conn{tcp4NAT, udp6NAT} {
			t.Run(o.name+"/"+c.proto, func(t *testing.T) {
				fc := fwdCase{in: c.origIn().bytes(), ingress: lanIf, flows: []fakeFlow{c.flow(3)}, cut: []cut.Tuple{c.orig()}}
				m, k, verdict := fc.run(t, o.order)
				if verdict != xdpDrop {
					t.Errorf("verdict %d, want drop", verdict)
				}
				if !bytes.Equal(m.frame, fc.in) {
					t.Errorf("the cut frame changed: %x", m.frame)
				}
				if len(k.lookups) != 0 || len(k.redirects) != 0 || k.counters() != (ForwardCounters{}) {
					t.Errorf("the forward stage ran: lookups %x, redirects %v, counters %+v", k.lookups, k.redirects, k.counters())
				}
				if v := decodeValue(m.value[:], o.order); v.packets != 1 {
					t.Errorf("cut value %+v, want 1 packet", v)
				}
			})
		}
	}
}

// Every truncation of a frame the stage sends is bounds checked (vm fails
// on any access outside the frame); one that ends before the transport
// header does passes unchanged.
func TestForwardTruncated(t *testing.T) {
	for _, o := range orders {
		for name, c := range map[string]struct {
			c    conn
			xmit uint8
			fib  fibAnswer
		}{
			"ipv4 tcp": {c: tcp4NAT, xmit: 3},
			"ipv4 udp": {c: udp4NAT, xmit: 3},
			"ipv6 tcp": {c: tcp6Routed, xmit: 1, fib: fibAnswer{ifindex: wanIf, smac: wanMAC, dmac: gwMAC}},
			"ipv6 udp": {c: udp6NAT, xmit: 3},
		} {
			full := c.c.origIn().bytes()
			h, _ := parseIP(full)
			headers := h.l4 + 8
			if h.proto == protoTCP {
				headers = h.l4 + 20
			}
			for n := 0; n < len(full); n++ {
				fc := fwdCase{in: full[:n], ingress: lanIf, flows: []fakeFlow{c.c.flow(c.xmit)}, fib: c.fib}
				m, _, verdict := fc.run(t, o.order)
				if n < headers && (verdict != xdpPass || !bytes.Equal(m.frame, fc.in)) {
					t.Errorf("%s, %s truncated to %d bytes: verdict %d, frame %x", o.name, name, n, verdict, m.frame)
				}
			}
		}
	}
}

// The forward program calls the cut's map lookup and clock, the forward
// helpers and the one kfunc; nothing that adds a key.
func TestForwardProgramCalls(t *testing.T) {
	allowed := map[int32]bool{helperMapLookupElem: true, helperKtimeGetNS: true, helperCsumDiff: true,
		helperRedirectMap: true, helperFibLookup: true, helperProbeReadKernel: true}
	for _, o := range orders {
		l := layout612(o.order)
		code, err := program(cutMapFD, &forwardSpec{layout: l, maps: forwardMaps{redirect: testRedirFD, stats: testStatsFD}}, o.order)
		if err != nil {
			t.Fatal(err)
		}
		kfuncs := 0
		for pc := 0; pc < len(code)/8; pc++ {
			b := code[pc*8:]
			regs := b[1]
			src := regs >> 4
			if isBigEndian(o.order) {
				src = regs & 0x0f
			}
			imm := int32(o.order.Uint32(b[4:]))
			switch {
			case b[0] == classJMP|jmpCALL && src == pseudoKfuncCall:
				kfuncs++
				if imm != l.KfuncID || int16(o.order.Uint16(b[2:])) != l.KfuncFDIndex {
					t.Errorf("%s: kfunc call %d in BTF %d", o.name, imm, int16(o.order.Uint16(b[2:])))
				}
			case b[0] == classJMP|jmpCALL && !allowed[imm]:
				t.Errorf("%s: calls helper %d", o.name, imm)
			case b[0] == classLD|modeIMM|sizeDW:
				pc++
			}
		}
		if kfuncs != 2 {
			t.Errorf("%s: %d kfunc calls, want one for each family", o.name, kfuncs)
		}
	}
}

// The layouts the tests use pass the program's check
// (forward_linux_test.go compares bitAt with bitfieldOf).
func TestForwardLayoutsValid(t *testing.T) {
	for _, o := range orders {
		l := layout612(o.order)
		if err := l.check(); err != nil {
			t.Errorf("%s: %v", o.name, err)
		}
		withTunNum(&l, o.order)
		if err := l.check(); err != nil {
			t.Errorf("%s with tun_num: %v", o.name, err)
		}
	}
}
