//go:build linux && !mips

package xdp

import (
	"encoding/binary"
	"runtime"
	"testing"
	"unsafe"
)

// The attribute structs have union bpf_attr's layout on every CPU: 32-bit
// ones align a uint64 to 4 bytes and keep a pointer in half of a u64.
func TestBPFAttrLayout(t *testing.T) {
	var me mapElemAttr
	var pl progLoadAttr
	var pi progInfo
	checks := []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof(map_create)", unsafe.Sizeof(mapCreateAttr{}), 44},
		{"sizeof(map_elem)", unsafe.Sizeof(me), 32},
		{"map_elem.key", unsafe.Offsetof(me.key), 8},
		{"map_elem.value", unsafe.Offsetof(me.value), 16},
		{"map_elem.flags", unsafe.Offsetof(me.flags), 24},
		{"sizeof(prog_load)", unsafe.Sizeof(pl), 128},
		{"prog_load up to expected_attach_type (what Linux 4.x takes)", unsafe.Offsetof(pl.progBTFFD), 72},
		{"prog_load.func_info", unsafe.Offsetof(pl.funcInfo), 80},
		{"prog_load.line_info", unsafe.Offsetof(pl.lineInfo), 96},
		{"prog_load.fd_array", unsafe.Offsetof(pl.fdArray), 120},
		{"prog_load.insns", unsafe.Offsetof(pl.insns), 8},
		{"prog_load.license", unsafe.Offsetof(pl.license), 16},
		{"prog_load.log_buf", unsafe.Offsetof(pl.logBuf), 32},
		{"prog_load.prog_flags", unsafe.Offsetof(pl.flags), 44},
		{"prog_load.prog_name", unsafe.Offsetof(pl.name), 48},
		{"sizeof(obj_info)", unsafe.Sizeof(objInfoAttr{}), 16},
		{"sizeof(bpf_prog_info head)", unsafe.Sizeof(pi), 88},
		{"prog_info.nr_map_ids", unsafe.Offsetof(pi.nrMapIDs), 52},
		{"prog_info.map_ids", unsafe.Offsetof(pi.mapIDs), 56},
		{"prog_info.name", unsafe.Offsetof(pi.name), 64},
		{"sizeof(bpf_map_info head)", unsafe.Sizeof(mapInfo{}), 40},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	// The pointer sits in the u64's low half: as a u64 in the CPU's order
	// the field reads as the address.
	x := byte(1)
	p := newPtr(unsafe.Pointer(&x))
	raw := (*[8]byte)(unsafe.Pointer(&p))
	if got, want := binary.NativeEndian.Uint64(raw[:]), uint64(uintptr(unsafe.Pointer(&x))); got != want {
		t.Errorf("ptr reads as %#x as a u64, want %#x", got, want)
	}
}

func TestNativeOrderIsTheCPUs(t *testing.T) {
	big := map[string]bool{"mips": true, "mips64": true, "ppc64": true, "s390x": true}[runtime.GOARCH]
	if isBigEndian(binary.NativeEndian) != big {
		t.Errorf("isBigEndian(NativeEndian) = %v on %s", !big, runtime.GOARCH)
	}
}
