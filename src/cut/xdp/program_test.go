package xdp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"strings"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

// vm runs the generated program as a CPU of the given byte order would:
// it decodes the instruction bytes in that order and loads multi-byte
// values from memory in that order. It knows only the instructions the
// program uses and fails on any access outside the frame, the stack or the
// map values, so it also checks that the bounds checks come before the
// loads. With a kernel it also runs the forward stage's helpers and kfunc;
// the flows' kernel memory is readable only through bpf_probe_read_kernel.
type vm struct {
	order   binary.ByteOrder
	frame   []byte
	stack   [512]byte
	value   [ValueSize]byte
	cut     map[Key]bool // keys in the map
	lookup  [][]byte     // keys the program looked up
	ingress uint32       // xdp_md.ingress_ifindex
	kernel  fakeKernel   // what the forward stage calls (forward_test.go); nil: only what the cut calls
}

const (
	baseCtx   = 0x1000_0000
	baseFrame = 0x2000_0000
	baseStack = 0x3000_0000
	baseValue = 0x4000_0000
	mapHandle = 0x5000_0000 // plus the map's fd
	cutMapFD  = 3
)

func (m *vm) mem(addr uint64, size int) ([]byte, error) {
	in := func(base uint64, b []byte) ([]byte, bool) {
		if addr >= base && addr+uint64(size) <= base+uint64(len(b)) {
			return b[addr-base : addr-base+uint64(size)], true
		}
		return nil, false
	}
	if b, ok := in(baseFrame, m.frame); ok {
		return b, nil
	}
	if b, ok := in(baseStack, m.stack[:]); ok {
		return b, nil
	}
	if b, ok := in(baseValue, m.value[:]); ok {
		return b, nil
	}
	if m.kernel != nil {
		if b, ok := m.kernel.memory(addr, size); ok {
			return b, nil
		}
	}
	return nil, fmt.Errorf("access of %d bytes at %#x outside frame, stack and map values", size, addr)
}

func (m *vm) load(addr uint64, size int) (uint64, error) {
	if addr == baseCtx && size == 4 {
		return baseFrame, nil
	}
	if addr == baseCtx+4 && size == 4 {
		return baseFrame + uint64(len(m.frame)), nil
	}
	if addr == baseCtx+12 && size == 4 {
		return uint64(m.ingress), nil
	}
	b, err := m.mem(addr, size)
	if err != nil {
		return 0, err
	}
	switch size {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(m.order.Uint16(b)), nil
	case 4:
		return uint64(m.order.Uint32(b)), nil
	}
	return m.order.Uint64(b), nil
}

func (m *vm) store(addr uint64, size int, v uint64) error {
	b, err := m.mem(addr, size)
	if err != nil {
		return err
	}
	switch size {
	case 1:
		b[0] = byte(v)
	case 2:
		m.order.PutUint16(b, uint16(v))
	case 4:
		m.order.PutUint32(b, uint32(v))
	default:
		m.order.PutUint64(b, v)
	}
	return nil
}

func sizeOf(op uint8) int {
	return map[uint8]int{sizeB: 1, sizeH: 2, sizeW: 4, sizeDW: 8}[op&0x18]
}

// run executes code and returns the XDP verdict.
func (m *vm) run(code []byte) (uint64, error) {
	var reg [11]uint64
	reg[r1] = baseCtx
	reg[r10] = baseStack + uint64(len(m.stack))
	for pc, steps := 0, 0; ; pc, steps = pc+1, steps+1 {
		if pc*8 >= len(code) || steps > 10000 {
			return 0, fmt.Errorf("pc %d runs off the program", pc)
		}
		b := code[pc*8 : pc*8+8]
		op := b[0]
		dst, src := b[1]&0x0f, b[1]>>4
		if isBigEndian(m.order) {
			dst, src = b[1]>>4, b[1]&0x0f
		}
		off := int64(int16(m.order.Uint16(b[2:])))
		imm := int64(int32(m.order.Uint32(b[4:])))
		operand := uint64(imm)
		if op&srcX != 0 {
			operand = reg[src]
		}
		var err error
		switch class := op & 0x07; {
		case op == classLD|modeIMM|sizeDW:
			if src != pseudoMapFD || pc*8+16 > len(code) || !bytes.Equal(code[pc*8+8:pc*8+16], make([]byte, 8)) {
				return 0, fmt.Errorf("pc %d: 64-bit immediate that is not a map's fd", pc)
			}
			reg[dst] = mapHandle + uint64(uint32(imm))
			pc++
		case class == classALU && op&0xf0 == aluEND:
			reg[dst], err = m.byteSwap(reg[dst], op&srcX != 0, imm)
		case class == classALU64:
			var ok bool
			if reg[dst], ok = alu(op&0xf0, reg[dst], operand, 64); !ok {
				return 0, fmt.Errorf("pc %d: ALU op %#x", pc, op)
			}
		case class == classALU:
			var ok bool
			if reg[dst], ok = alu(op&0xf0, uint64(uint32(reg[dst])), uint64(uint32(operand)), 32); !ok {
				return 0, fmt.Errorf("pc %d: ALU32 op %#x", pc, op)
			}
			reg[dst] = uint64(uint32(reg[dst]))
		case class == classLDX && op&0xe0 == modeMEM:
			reg[dst], err = m.load(reg[src]+uint64(off), sizeOf(op))
		case class == classST && op&0xe0 == modeMEM:
			err = m.store(reg[dst]+uint64(off), sizeOf(op), uint64(imm))
		case class == classSTX && op&0xe0 == modeMEM:
			err = m.store(reg[dst]+uint64(off), sizeOf(op), reg[src])
		case op == classSTX|modeATOMIC|sizeDW && imm == 0:
			var v uint64
			if v, err = m.load(reg[dst]+uint64(off), 8); err == nil {
				err = m.store(reg[dst]+uint64(off), 8, v+reg[src])
			}
		case class == classJMP:
			taken := false
			switch op & 0xf0 {
			case jmpJA:
				taken = true
			case jmpJEQ:
				taken = reg[dst] == operand
			case jmpJNE:
				taken = reg[dst] != operand
			case jmpJGT:
				taken = reg[dst] > operand
			case jmpJLT:
				taken = reg[dst] < operand
			case jmpJSET:
				taken = reg[dst]&operand != 0
			case jmpCALL:
				if op&srcX != 0 {
					return 0, fmt.Errorf("pc %d: call by register", pc)
				}
				var args [5]uint64
				copy(args[:], reg[r1:r6])
				reg[r0], err = m.call(src, imm, off, args)
				for r := r1; r <= r5; r++ {
					reg[r] = 0xdead
				}
			case jmpEXIT:
				return reg[r0], nil
			default:
				return 0, fmt.Errorf("pc %d: jump op %#x", pc, op)
			}
			if taken {
				pc += int(off)
			}
		default:
			return 0, fmt.Errorf("pc %d: op %#x", pc, op)
		}
		if err != nil {
			return 0, fmt.Errorf("pc %d (op %#x): %v", pc, op, err)
		}
	}
}

// alu computes one ALU operation of the given width (32: the operands are
// already 32 bits, the caller truncates); shift counts are masked as the
// kernel's interpreter does.
func alu(op uint8, d, s uint64, width uint64) (uint64, bool) {
	switch op {
	case aluMOV:
		return s, true
	case aluADD:
		return d + s, true
	case aluSUB:
		return d - s, true
	case aluOR:
		return d | s, true
	case aluAND:
		return d & s, true
	case aluXOR:
		return d ^ s, true
	case aluLSH:
		return d << (s & (width - 1)), true
	case aluRSH:
		return d >> (s & (width - 1)), true
	}
	return 0, false
}

// byteSwap is BPF_END: to big-endian (toBE) or to little-endian, the low
// width bits, swapped where the CPU's order differs, the rest cleared.
func (m *vm) byteSwap(v uint64, toBE bool, width int64) (uint64, error) {
	swap := toBE != isBigEndian(m.order)
	switch width {
	case 16:
		if swap {
			return uint64(bits.ReverseBytes16(uint16(v))), nil
		}
		return uint64(uint16(v)), nil
	case 32:
		if swap {
			return uint64(bits.ReverseBytes32(uint32(v))), nil
		}
		return uint64(uint32(v)), nil
	case 64:
		if swap {
			return bits.ReverseBytes64(v), nil
		}
		return v, nil
	}
	return 0, fmt.Errorf("byte swap of %d bits", width)
}

// fakeKernel is the kernel side of the forward stage (forward_test.go's
// kernel, on the CPUs that build the stage).
type fakeKernel interface {
	memory(addr uint64, size int) ([]byte, bool)                     // its map values the program may touch
	mapLookup(m *vm, mapArg, keyArg uint64) (uint64, bool, error)    // a lookup in one of its maps (ok), else not its map
	kfunc(m *vm, id int32, fdIndex int16, a [5]uint64) (uint64, error)
	helper(m *vm, helper int64, a [5]uint64) (uint64, error)
}

// call runs a helper (src 0) or, with the forward stage's kernel, a kfunc
// (src pseudoKfuncCall); a holds r1 to r5.
func (m *vm) call(src uint8, imm, off int64, a [5]uint64) (uint64, error) {
	if src == pseudoKfuncCall && m.kernel != nil {
		return m.kernel.kfunc(m, int32(imm), int16(off), a)
	}
	if src != 0 {
		return 0, fmt.Errorf("call with src_reg %d (imm %d)", src, imm)
	}
	switch helper := imm; helper {
	case helperMapLookupElem:
		if m.kernel != nil {
			if r, ok, err := m.kernel.mapLookup(m, a[0], a[1]); ok {
				return r, err
			}
		}
		if a[0] != mapHandle+cutMapFD {
			return 0, fmt.Errorf("lookup in %#x, not a map the program has", a[0])
		}
		k, err := m.mem(a[1], KeySize)
		if err != nil {
			return 0, err
		}
		m.lookup = append(m.lookup, append([]byte{}, k...))
		var key Key
		copy(key[:], k)
		if m.cut[key] {
			return baseValue, nil
		}
		return 0, nil
	case helperKtimeGetNS:
		return 123456789, nil
	}
	if m.kernel != nil {
		return m.kernel.helper(m, imm, a)
	}
	return 0, fmt.Errorf("helper %d", imm)
}

var orders = []struct {
	name  string
	order binary.ByteOrder
}{{"big-endian", binary.BigEndian}, {"little-endian", binary.LittleEndian}}

func mustKey(t *testing.T, tu cut.Tuple) Key {
	t.Helper()
	k, err := EncodeKey(tu)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var (
	udp4 = cut.Tuple{Proto: "udp", Src: "10.90.1.2", Dst: "198.51.100.7", SrcPort: 40000, DstPort: 53}
	tcp4 = cut.Tuple{Proto: "tcp", Src: "10.90.1.2", Dst: "198.51.100.7", SrcPort: 0x1234, DstPort: 443}
	udp6 = cut.Tuple{Proto: "udp", Src: "fd00:90:1::2", Dst: "2001:db8::7", SrcPort: 5000, DstPort: 0xabcd}
	tcp6 = cut.Tuple{Proto: "tcp", Src: "fd00:90:1::2", Dst: "2001:db8::7", SrcPort: 50000, DstPort: 443}
)

// The program's key for each kind of frame is exactly EncodeKey's bytes,
// with the program built and run for a big-endian CPU (MIPS) and a
// little-endian one; a cut frame is counted, stamped and dropped.
func TestProgramKeyEqualsEncodeKey(t *testing.T) {
	cases := map[string]frameSpec{
		"ipv4 udp":        {tuple: udp4},
		"ipv4 tcp":        {tuple: tcp4},
		"ipv4 options":    {tuple: udp4, ipv4Opts: 3},
		"ipv4 ihl 15":     {tuple: tcp4, ipv4Opts: 10},
		"ipv6 udp":        {tuple: udp6},
		"ipv6 tcp":        {tuple: tcp6},
		"vlan ipv4":       {tuple: udp4, vlan: 100},
		"vlan ipv6":       {tuple: tcp6, vlan: 4094},
		"pppoe ipv4":      {tuple: tcp4, pppoe: true},
		"pppoe ipv6":      {tuple: udp6, pppoe: true},
		"vlan pppoe ipv4": {tuple: udp4, vlan: 7, pppoe: true},
		"vlan pppoe ipv6": {tuple: tcp6, vlan: 7, pppoe: true},
	}
	for _, o := range orders {
		code, err := program(cutMapFD, nil, o.order)
		if err != nil {
			t.Fatal(err)
		}
		for name, spec := range cases {
			want := mustKey(t, spec.tuple)
			spec.payload = []byte("payload")
			m := &vm{order: o.order, frame: spec.frame(), cut: map[Key]bool{want: true}}
			verdict, err := m.run(code)
			if err != nil {
				t.Fatalf("%s, %s: %v", o.name, name, err)
			}
			if len(m.lookup) != 1 || !bytes.Equal(m.lookup[0], want[:]) {
				t.Errorf("%s, %s: looked up %x, want %x", o.name, name, m.lookup, want[:])
			}
			if verdict != xdpDrop {
				t.Errorf("%s, %s: verdict %d, want drop (%d)", o.name, name, verdict, xdpDrop)
			}
			if v := decodeValue(m.value[:], o.order); v.packets != 1 || v.lastNS != 123456789 {
				t.Errorf("%s, %s: value %+v after one frame, want 1 packet stamped 123456789", o.name, name, v)
			}

			// The same frame passes when its tuple is not cut, and so does
			// the other direction of a cut tuple when only one is cut.
			m = &vm{order: o.order, frame: spec.frame(), cut: map[Key]bool{mustKey(t, spec.tuple.Reverse()): true}}
			if verdict, err := m.run(code); err != nil || verdict != xdpPass {
				t.Errorf("%s, %s with only the reverse tuple cut: verdict %d, %v; want pass", o.name, name, verdict, err)
			}
		}
	}
}

// Frames the program cannot key pass without a lookup: IPv4 fragments
// after the first, IPv6 extension headers, other protocols, and every
// truncation of a cut frame (which also proves each load is bounds
// checked).
func TestProgramPassesWhatItCannotKey(t *testing.T) {
	icmp := frameSpec{tuple: udp4}.frame()
	icmp[14+9] = 1
	arp := frameSpec{tuple: udp4}.frame()
	binary.BigEndian.PutUint16(arp[12:], 0x0806)
	qinq := frameSpec{tuple: udp4, vlan: 5}.frame()
	qinq = append(qinq[:16:16], append([]byte{0x81, 0x00, 0, 6}, qinq[16:]...)...) // a second tag
	pppoeDiscovery := frameSpec{tuple: udp4, pppoe: true}.frame()
	pppoeDiscovery[15] = 0x09 // PADI
	ipv4Version := frameSpec{tuple: udp4}.frame()
	ipv4Version[14] = 0x65
	ipv4ShortIHL := frameSpec{tuple: udp4}.frame()
	ipv4ShortIHL[14] = 0x44
	cases := map[string][]byte{
		"ipv4 later fragment":  frameSpec{tuple: udp4, fragOff: 185}.frame(),
		"ipv6 hop-by-hop":      frameSpec{tuple: udp6, v6Ext: true}.frame(),
		"icmp":                 icmp,
		"arp":                  arp,
		"two vlan tags":        qinq,
		"pppoe discovery code": pppoeDiscovery,
		"ip version 6 in ipv4": ipv4Version,
		"ihl 4":                ipv4ShortIHL,
	}
	full := map[string]frameSpec{
		"ipv4": {tuple: udp4, ipv4Opts: 2}, "ipv6": {tuple: tcp6},
		"vlan pppoe ipv4": {tuple: tcp4, vlan: 9, pppoe: true}, "vlan pppoe ipv6": {tuple: udp6, vlan: 9, pppoe: true},
	}
	for name, spec := range full {
		f := spec.frame()
		for n := 0; n < spec.portsEnd(); n++ {
			cases[fmt.Sprintf("%s truncated to %d bytes, before the ports end", name, n)] = f[:n]
		}
	}
	all := map[Key]bool{mustKey(t, udp4): true, mustKey(t, tcp4): true, mustKey(t, udp6): true, mustKey(t, tcp6): true}
	for _, o := range orders {
		code, err := program(cutMapFD, nil, o.order)
		if err != nil {
			t.Fatal(err)
		}
		for name, f := range cases {
			m := &vm{order: o.order, frame: f, cut: all}
			verdict, err := m.run(code)
			if err != nil {
				t.Fatalf("%s, %s: %v", o.name, name, err)
			}
			if verdict != xdpPass {
				t.Errorf("%s, %s: verdict %d, want pass (%d); looked up %x", o.name, name, verdict, xdpPass, m.lookup)
			}
		}
	}
}

// The instruction bitfields follow C's layout: on big-endian the
// destination register is the high nibble, and off/imm are big-endian.
func TestEncodeInsnByteOrder(t *testing.T) {
	in := insn{op: classLDX | modeMEM | sizeH, dst: r3, src: r7, off: 12}
	if got, want := encodeInsn(nil, in, binary.LittleEndian), []byte{0x69, 0x73, 12, 0, 0, 0, 0, 0}; !bytes.Equal(got, want) {
		t.Errorf("little-endian r3 = *(u16 *)(r7 + 12): %x, want %x", got, want)
	}
	if got, want := encodeInsn(nil, in, binary.BigEndian), []byte{0x69, 0x37, 0, 12, 0, 0, 0, 0}; !bytes.Equal(got, want) {
		t.Errorf("big-endian r3 = *(u16 *)(r7 + 12): %x, want %x", got, want)
	}
	mov := insn{op: classALU64 | aluMOV | srcK, dst: r0, imm: -2}
	if got, want := encodeInsn(nil, mov, binary.BigEndian), []byte{0xb7, 0x00, 0, 0, 0xff, 0xff, 0xff, 0xfe}; !bytes.Equal(got, want) {
		t.Errorf("big-endian r0 = -2: %x, want %x", got, want)
	}
}

func TestEncodeKeyLayout(t *testing.T) {
	k := mustKey(t, udp4)
	want := make([]byte, KeySize)
	copy(want, []byte{4, 17, 0x9c, 0x40, 0, 53, 0, 0, 10, 90, 1, 2})
	copy(want[24:], []byte{198, 51, 100, 7})
	if !bytes.Equal(k[:], want) {
		t.Errorf("key of %s:\n got %x\nwant %x", udp4, k[:], want)
	}
	for _, tu := range []cut.Tuple{udp4, tcp4, udp6, tcp6} {
		k := mustKey(t, tu)
		back, err := k.Tuple()
		if err != nil || back != tu {
			t.Errorf("key of %s decodes to %s, %v", tu, back, err)
		}
	}
	if _, err := EncodeKey(cut.Tuple{Proto: "icmp", Src: "10.0.0.1", Dst: "10.0.0.2"}); err == nil {
		t.Error("EncodeKey took an icmp tuple")
	}
	if _, err := EncodeKey(cut.Tuple{Proto: "udp", Src: "10.0.0.1", Dst: "fd00::2"}); err == nil {
		t.Error("EncodeKey took a tuple of two families")
	}
}

func TestAssembleRejectsBadLabels(t *testing.T) {
	var a asm
	a.goTo("nowhere")
	if _, err := a.assemble(binary.LittleEndian); err == nil {
		t.Error("a jump to an undefined label assembled")
	}
	var b asm
	b.at("top")
	b.movImm(r0, 2)
	b.goTo("top")
	if _, err := b.assemble(binary.LittleEndian); err == nil {
		t.Error("a backward jump assembled")
	}
}

// portsEnd is where the transport ports end in the frame of s.
func (s frameSpec) portsEnd() int {
	n := 14 + 4
	if s.vlan != 0 {
		n += vlanHdrLen
	}
	if s.pppoe {
		n += pppoeHdrLen
	}
	if strings.Contains(s.tuple.Src, ":") {
		return n + ipv6HdrLen
	}
	return n + ipv4MinLen + 4*s.ipv4Opts
}

// The program calls only map lookup and the clock: it can never add a key,
// so no frame can undo a Release.
func TestProgramNeverAddsKeys(t *testing.T) {
	for _, o := range orders {
		code, err := program(cutMapFD, nil, o.order)
		if err != nil {
			t.Fatal(err)
		}
		calls := map[int32]int{}
		for pc := 0; pc < len(code)/8; pc++ {
			b := code[pc*8:]
			if b[0] == classJMP|jmpCALL {
				calls[int32(o.order.Uint32(b[4:]))]++
			}
			if b[0] == classLD|modeIMM|sizeDW {
				pc++ // the immediate's second slot
			}
		}
		if len(calls) != 2 || calls[helperMapLookupElem] != 1 || calls[helperKtimeGetNS] != 1 {
			t.Errorf("%s: helper calls %v, want one bpf_map_lookup_elem (1) and one bpf_ktime_get_ns (5)", o.name, calls)
		}
	}
}
