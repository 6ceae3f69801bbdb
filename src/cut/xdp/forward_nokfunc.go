//go:build mips || mipsle

package xdp

import (
	"encoding/binary"
	"errors"
)

// errNoKfunc is why 32-bit MIPS routers (MT7621, ath79, ...) cannot
// forward in XDP: the forward stage calls the kernel function
// bpf_xdp_flow_lookup, and only a BPF JIT with kfunc calls can (x86-64,
// arm64, riscv64, ...; Linux's MIPS JIT has none, and the verifier
// refuses kfunc calls without a JIT). The code is left out of these
// builds, which keeps the MIPS binary within its flash budget.
var errNoKfunc = errors.New("XDP forwarding calls the kernel function bpf_xdp_flow_lookup, which needs a BPF JIT with kfunc calls; Linux's 32-bit MIPS JIT has none")

func (a *asm) forwardStage(*Layout, forwardMaps, binary.ByteOrder) error { return errNoKfunc }
