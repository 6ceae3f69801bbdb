package xdp

import (
	"encoding/binary"
	"fmt"
)

// The few eBPF instruction encodings the program uses (see the kernel's
// Documentation/bpf/standardization/instruction-set.rst).
const (
	classLD    = 0x00
	classLDX   = 0x01
	classST    = 0x02
	classSTX   = 0x03
	classJMP   = 0x05
	classALU   = 0x04 // 32-bit operations, upper half zeroed
	classALU64 = 0x07

	sizeW  = 0x00
	sizeH  = 0x08
	sizeB  = 0x10
	sizeDW = 0x18

	modeIMM    = 0x00
	modeMEM    = 0x60
	modeATOMIC = 0xc0 // BPF_XADD before Linux 5.12; imm 0 is BPF_ADD in both

	srcK = 0x00
	srcX = 0x08

	aluADD = 0x00
	aluSUB = 0x10
	aluOR  = 0x40
	aluAND = 0x50
	aluLSH = 0x60
	aluRSH = 0x70
	aluXOR = 0xa0
	aluMOV = 0xb0
	aluEND = 0xd0 // byte swap; with srcX (BPF_TO_BE) from big-endian to the CPU's order

	jmpJA   = 0x00
	jmpJEQ  = 0x10
	jmpJGT  = 0x20
	jmpJNE  = 0x50
	jmpJSET = 0x40
	jmpJLT  = 0xa0
	jmpCALL = 0x80
	jmpEXIT = 0x90

	pseudoMapFD     = 1 // src_reg of a 64-bit immediate load that names a map by fd
	pseudoKfuncCall = 2 // src_reg of a call whose imm is a kernel function's BTF id
)

// Registers.
const (
	r0 = iota
	r1
	r2
	r3
	r4
	r5
	r6
	r7
	r8
	r9
	r10 // frame pointer, read only
)

// Helper functions by number (include/uapi/linux/bpf.h, stable ABI).
const (
	helperMapLookupElem   = 1
	helperKtimeGetNS      = 5
	helperCsumDiff        = 28
	helperRedirectMap     = 51
	helperFibLookup       = 69
	helperProbeReadKernel = 113
)

// insn is one instruction slot. A jump names its target by label; the
// assembler turns the label into the slot offset.
type insn struct {
	op       uint8
	dst, src uint8
	off      int16
	imm      int32
	label    string // this slot's own label, for jumps to it
	target   string // a jump's target label
}

// asm collects instructions with labels.
type asm struct {
	insns []insn
	next  string // label for the next instruction
	err   error
}

func (a *asm) emit(i insn) {
	if a.next != "" {
		i.label, a.next = a.next, ""
	}
	a.insns = append(a.insns, i)
}

// at labels the next instruction.
func (a *asm) at(label string) {
	if a.next != "" {
		a.err = fmt.Errorf("labels %q and %q on one instruction", a.next, label)
	}
	a.next = label
}

func (a *asm) mov(dst, src uint8) { a.emit(insn{op: classALU64 | aluMOV | srcX, dst: dst, src: src}) }
func (a *asm) movImm(dst uint8, v int32) {
	a.emit(insn{op: classALU64 | aluMOV | srcK, dst: dst, imm: v})
}
func (a *asm) addImm(dst uint8, v int32) {
	a.emit(insn{op: classALU64 | aluADD | srcK, dst: dst, imm: v})
}
func (a *asm) add(dst, src uint8) { a.emit(insn{op: classALU64 | aluADD | srcX, dst: dst, src: src}) }
func (a *asm) sub(dst, src uint8) { a.emit(insn{op: classALU64 | aluSUB | srcX, dst: dst, src: src}) }
func (a *asm) orReg(dst, src uint8) {
	a.emit(insn{op: classALU64 | aluOR | srcX, dst: dst, src: src})
}
func (a *asm) xorImm(dst uint8, v int32) {
	a.emit(insn{op: classALU64 | aluXOR | srcK, dst: dst, imm: v})
}

// mov32: dst = (u32)src, the upper half cleared.
func (a *asm) mov32(dst, src uint8) { a.emit(insn{op: classALU | aluMOV | srcX, dst: dst, src: src}) }

// fromBE16: dst = the big-endian 16-bit value in dst, in the CPU's order.
func (a *asm) fromBE16(dst uint8) { a.emit(insn{op: classALU | aluEND | srcX, dst: dst, imm: 16}) }

func (a *asm) andImm(dst uint8, v int32) {
	a.emit(insn{op: classALU64 | aluAND | srcK, dst: dst, imm: v})
}
func (a *asm) lshImm(dst uint8, v int32) {
	a.emit(insn{op: classALU64 | aluLSH | srcK, dst: dst, imm: v})
}
func (a *asm) rshImm(dst uint8, v int32) {
	a.emit(insn{op: classALU64 | aluRSH | srcK, dst: dst, imm: v})
}

// load: dst = *(size *)(src + off)
func (a *asm) load(size uint8, dst, src uint8, off int16) {
	a.emit(insn{op: classLDX | modeMEM | size, dst: dst, src: src, off: off})
}

// store: *(size *)(dst + off) = src
func (a *asm) store(size uint8, dst uint8, off int16, src uint8) {
	a.emit(insn{op: classSTX | modeMEM | size, dst: dst, src: src, off: off})
}

// storeImm: *(size *)(dst + off) = v
func (a *asm) storeImm(size uint8, dst uint8, off int16, v int32) {
	a.emit(insn{op: classST | modeMEM | size, dst: dst, off: off, imm: v})
}

// atomicAdd64: lock *(u64 *)(dst + off) += src
func (a *asm) atomicAdd64(dst uint8, off int16, src uint8) {
	a.emit(insn{op: classSTX | modeATOMIC | sizeDW, dst: dst, src: src, off: off})
}

// jumpImm: if dst <op> v goto target (unsigned compares)
func (a *asm) jumpImm(op uint8, dst uint8, v int32, target string) {
	a.emit(insn{op: classJMP | op | srcK, dst: dst, imm: v, target: target})
}

// jump: if dst <op> src goto target
func (a *asm) jump(op uint8, dst, src uint8, target string) {
	a.emit(insn{op: classJMP | op | srcX, dst: dst, src: src, target: target})
}

func (a *asm) goTo(target string) { a.emit(insn{op: classJMP | jmpJA, target: target}) }
func (a *asm) call(helper int32)  { a.emit(insn{op: classJMP | jmpCALL, imm: helper}) }
func (a *asm) exit()              { a.emit(insn{op: classJMP | jmpEXIT}) }

// callKfunc calls the kernel function with BTF id id; fdIndex is the
// index in the load's fd_array of the BTF that id belongs to (0: vmlinux).
func (a *asm) callKfunc(id int32, fdIndex int16) {
	a.emit(insn{op: classJMP | jmpCALL, src: pseudoKfuncCall, imm: id, off: fdIndex})
}

// loadMap: dst = the map whose file descriptor is fd (two slots).
func (a *asm) loadMap(dst uint8, fd int32) {
	a.emit(insn{op: classLD | modeIMM | sizeDW, dst: dst, src: pseudoMapFD, imm: fd})
	a.emit(insn{}) // upper 32 bits of the immediate: zero
}

// assemble resolves the labels and encodes the instructions in the byte
// order of the kernel that will run them.
func (a *asm) assemble(order binary.ByteOrder) ([]byte, error) {
	if a.err != nil {
		return nil, a.err
	}
	if a.next != "" {
		return nil, fmt.Errorf("label %q on no instruction", a.next)
	}
	pos := make(map[string]int)
	for i, in := range a.insns {
		if in.label == "" {
			continue
		}
		if _, dup := pos[in.label]; dup {
			return nil, fmt.Errorf("label %q defined twice", in.label)
		}
		pos[in.label] = i
	}
	out := make([]byte, 0, 8*len(a.insns))
	for i, in := range a.insns {
		if in.target != "" {
			t, ok := pos[in.target]
			if !ok {
				return nil, fmt.Errorf("jump to undefined label %q", in.target)
			}
			if t <= i {
				// The verifier of the kernels we run on (5.10 and later
				// without bounded-loop support for us) wants no back edges.
				return nil, fmt.Errorf("backward jump to %q", in.target)
			}
			in.off = int16(t - i - 1)
		}
		out = encodeInsn(out, in, order)
	}
	return out, nil
}

// encodeInsn appends one struct bpf_insn: code, the dst_reg:4/src_reg:4
// bitfields (dst in the low nibble on little-endian, the high one on
// big-endian, as C lays bitfields out), off and imm in the kernel's order.
func encodeInsn(b []byte, in insn, order binary.ByteOrder) []byte {
	regs := in.src<<4 | in.dst&0x0f
	if isBigEndian(order) {
		regs = in.dst<<4 | in.src&0x0f
	}
	var slot [8]byte
	slot[0], slot[1] = in.op, regs
	order.PutUint16(slot[2:], uint16(in.off))
	order.PutUint32(slot[4:], uint32(in.imm))
	return append(b, slot[:]...)
}

// isBigEndian tells binary.BigEndian and a big-endian binary.NativeEndian
// (a type of its own) from the little-endian orders.
func isBigEndian(order binary.ByteOrder) bool {
	return order.Uint16([]byte{0, 1}) == 1
}
