//go:build linux && (386 || arm || mipsle)

package xdp

import "unsafe"

// ptr is a __aligned_u64 of union bpf_attr that holds a user pointer: the
// 32-bit pointer in its low half, first on a little-endian CPU.
type ptr struct {
	p unsafe.Pointer
	_ uint32
}

func newPtr(p unsafe.Pointer) ptr { return ptr{p: p} }
