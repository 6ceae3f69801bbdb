//go:build linux && mips

package xdp

import "unsafe"

// ptr is a __aligned_u64 of union bpf_attr that holds a user pointer: the
// 32-bit pointer in its low half, second on a big-endian CPU.
type ptr struct {
	_ uint32
	p unsafe.Pointer
}

func newPtr(p unsafe.Pointer) ptr { return ptr{p: p} }
