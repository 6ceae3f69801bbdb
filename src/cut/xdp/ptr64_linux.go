//go:build linux && (amd64 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x)

package xdp

import "unsafe"

// ptr is a __aligned_u64 of union bpf_attr that holds a user pointer. It
// stays an unsafe.Pointer so the garbage collector keeps what it points at.
type ptr struct{ p unsafe.Pointer }

func newPtr(p unsafe.Pointer) ptr { return ptr{p} }
