//go:build linux && !mips && !mipsle

package xdp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"github.com/fastpath-wrt/fastpath/src/btf"
	"golang.org/x/sys/unix"
)

const (
	kfuncName       = "bpf_xdp_flow_lookup"
	flowtableModule = "nf_flow_table"

	cmdBTFGetFDByID = 19
	cmdBTFGetNextID = 23

	mapTypePercpuArray = 6
	mapTypeDevmapHash  = 25

	redirectEntries = 64 // devices that run the program at once
)

// btfSysfs is where the kernel publishes its BTF; a variable for tests.
var btfSysfs = "/sys/kernel/btf"

// resolveForward finds bpf_xdp_flow_lookup and the flowtable's layout in
// the running kernel's BTF. btfFD is the module's BTF the kfunc lives in
// (-1 for vmlinux), to pass in the program's fd_array; the caller closes
// it.
func resolveForward() (l Layout, btfFD int, err error) {
	btfFD = -1
	raw, err := os.ReadFile(btfSysfs + "/vmlinux")
	if err != nil {
		return l, -1, fmt.Errorf("the kernel has no BTF (%v): XDP forwarding needs CONFIG_DEBUG_INFO_BTF and CONFIG_DEBUG_INFO_BTF_MODULES", err)
	}
	spec, err := btf.Parse(raw, nil)
	if err != nil {
		return l, -1, err
	}
	raw = nil
	if _, _, ferr := spec.FuncID(kfuncName); ferr != nil {
		mod, err := os.ReadFile(btfSysfs + "/" + flowtableModule)
		if err != nil {
			return l, -1, fmt.Errorf("the kernel has no %s (Linux 6.11 and later with CONFIG_NF_FLOW_TABLE): neither vmlinux nor the %s module's BTF (%v) has it", kfuncName, flowtableModule, err)
		}
		if spec, err = btf.Parse(mod, spec); err != nil {
			return l, -1, err
		}
		if btfFD, err = kernelBTFByName(flowtableModule); err != nil {
			return l, -1, err
		}
		l.KfuncFDIndex = 1
	}
	defer func() {
		if err != nil && btfFD >= 0 {
			unix.Close(btfFD)
			btfFD = -1
		}
	}()
	return layoutFrom(spec, l, btfFD)
}

// layoutFrom reads the layout out of spec.
func layoutFrom(spec *btf.Spec, l Layout, btfFD int) (Layout, int, error) {
	id, params, err := spec.FuncID(kfuncName)
	if err != nil {
		return l, btfFD, err
	}
	if params != 4 {
		return l, btfFD, fmt.Errorf("%s takes %d arguments in this kernel; fastpath knows the 4 of Linux 6.11 (ctx, fib tuple, opts, opts size)", kfuncName, params)
	}
	l.KfuncID = int32(id)
	var errs []error
	size := func(name string) int16 {
		n, err := spec.StructSize(name)
		errs = append(errs, err)
		return int16(n)
	}
	member := func(path string, want uint32) btf.Member {
		m, err := spec.MemberOffset("flow_offload_tuple", path)
		if err == nil && want != 0 && m.Size != want {
			err = fmt.Errorf("flow_offload_tuple.%s is %d bytes in this kernel, fastpath reads %d", path, m.Size, want)
		}
		errs = append(errs, err)
		return m
	}
	field := func(path string, want uint32) int16 { return member(path, want).Byte() }
	bits := func(path string) Bitfield {
		m := member(path, 0)
		f, err := bitfieldOf(m, binary.NativeEndian)
		if err != nil {
			errs = append(errs, fmt.Errorf("flow_offload_tuple.%s: %w", path, err))
		}
		return f
	}
	l.HashSize = size("flow_offload_tuple_rhash")
	l.TupleSize = size("flow_offload_tuple")
	if m, err := spec.MemberOffset("flow_offload_tuple_rhash", "tuple"); err != nil {
		errs = append(errs, err)
	} else {
		l.Tuple = m.Byte()
	}
	l.Src, l.Dst = field("src_v6", 16), field("dst_v6", 16)
	l.Sport, l.Dport = field("src_port", 2), field("dst_port", 2)
	l.Dir, l.XmitType, l.EncapNum = bits("dir"), bits("xmit_type"), bits("encap_num")
	if _, err := spec.MemberOffset("flow_offload_tuple", "tun_num"); err == nil {
		l.TunNum = bits("tun_num")
	}
	l.MTU = field("mtu", 2)
	l.Iifidx = field("iifidx", 4)
	l.OutIfidx = field("out.ifidx", 4)
	l.HSource, l.HDest = field("out.h_source", 6), field("out.h_dest", 6)
	direct, err := spec.EnumValue("FLOW_OFFLOAD_XMIT_DIRECT")
	errs = append(errs, err)
	neigh, err := spec.EnumValue("FLOW_OFFLOAD_XMIT_NEIGH")
	errs = append(errs, err)
	l.XmitDirect, l.XmitNeigh = int32(direct), int32(neigh)
	if err := errors.Join(errs...); err != nil {
		return l, btfFD, err
	}
	return l, btfFD, l.check()
}

// bitfieldOf places a bitfield member within its byte: little-endian
// compilers allocate bitfields from the byte's least significant bit,
// big-endian ones from its most significant bit.
func bitfieldOf(m btf.Member, order binary.ByteOrder) (Bitfield, error) {
	if m.Bits == 0 || m.Bits > 8 {
		return Bitfield{}, fmt.Errorf("not a bitfield of at most 8 bits (%d)", m.Bits)
	}
	bit := uint8(m.Offset % 8)
	if uint32(bit)+m.Bits > 8 {
		return Bitfield{}, errors.New("crosses a byte boundary")
	}
	f := Bitfield{Byte: m.Byte(), Shift: bit, Width: uint8(m.Bits)}
	if isBigEndian(order) {
		f.Shift = 8 - bit - uint8(m.Bits)
	}
	return f, nil
}

type btfGetNextAttr struct {
	startID, nextID, openFlags uint32
}

// btfInfo is the head of struct bpf_btf_info.
type btfInfo struct {
	btf       uint64
	btfSize   uint32
	id        uint32
	name      uint64
	nameLen   uint32
	kernelBTF uint32
}

// kernelBTFByName opens the kernel BTF object of a module by its name.
func kernelBTFByName(name string) (int, error) {
	var id uint32
	for {
		attr := btfGetNextAttr{startID: id}
		if _, err := bpf(cmdBTFGetNextID, unsafe.Pointer(&attr), unsafe.Sizeof(attr)); err != nil {
			if errors.Is(err, unix.ENOENT) {
				return -1, fmt.Errorf("no BTF object of module %s among the kernel's", name)
			}
			return -1, fmt.Errorf("list the kernel's BTF objects: %w", err)
		}
		id = attr.nextID
		get := getFDByIDAttr{id: id}
		fd, err := bpf(cmdBTFGetFDByID, unsafe.Pointer(&get), unsafe.Sizeof(get))
		if err != nil {
			continue // gone meanwhile
		}
		buf := make([]byte, 64)
		info := btfInfo{name: uint64(uintptr(unsafe.Pointer(&buf[0]))), nameLen: uint32(len(buf))}
		ia := objInfoAttr{fd: uint32(fd), infoLen: uint32(unsafe.Sizeof(info)), info: newPtr(unsafe.Pointer(&info))}
		_, err = bpf(cmdObjGetInfoByFD, unsafe.Pointer(&ia), unsafe.Sizeof(ia))
		runtime.KeepAlive(buf)
		if err == nil && info.kernelBTF != 0 && cString(buf) == name {
			return fd, nil
		}
		unix.Close(fd)
	}
}

// forwarder is the forward stage's maps and the kfunc's BTF.
type forwarder struct {
	spec   forwardSpec
	btfFD  int // -1 for vmlinux
	redir  int
	stats  int
	nCPU   int
	byName map[string]int32 // devices in the redirect map
}

func openForwarder() (*forwarder, error) {
	l, btfFD, err := resolveForward()
	if err != nil {
		return nil, err
	}
	f := &forwarder{btfFD: btfFD, redir: -1, stats: -1, byName: map[string]int32{}}
	if f.redir, err = createMapOf(mapTypeDevmapHash, "fastpath_out", 4, 4, redirectEntries, 0); err != nil {
		f.close()
		return nil, err
	}
	if f.stats, err = createMapOf(mapTypePercpuArray, "fastpath_fwd", 4, 8, statCount, 0); err != nil {
		f.close()
		return nil, err
	}
	if f.nCPU, err = possibleCPUs(); err != nil {
		f.close()
		return nil, err
	}
	f.spec = forwardSpec{layout: l, maps: forwardMaps{redirect: int32(f.redir), stats: int32(f.stats)}}
	return f, nil
}

// fdArray is the program load's fd_array: the kfunc's BTF at index 1.
func (f *forwarder) fdArray() []int32 {
	if f.btfFD < 0 {
		return nil
	}
	return []int32{int32(f.btfFD), int32(f.btfFD)}
}

// add lets the program send frames out of dev; remove stops it. The
// kernel finds a redirect map's device by index in the network namespace
// of the process that writes the entry, so the entry is written from
// inside the devices' namespace (netns, 0 for the caller's).
func (f *forwarder) add(dev string, index int32, netns int) error {
	k := binary.NativeEndian.AppendUint32(nil, uint32(index))
	if err := inNetNS(netns, func() error { return mapUpdate(f.redir, k, k, 0) }); err != nil {
		return fmt.Errorf("add %s to the XDP redirect map: %w", dev, err)
	}
	f.byName[dev] = index
	return nil
}

// inNetNS runs fn on a thread in network namespace fd (0: here). The
// thread never returns to the pool if it could not come back.
func inNetNS(fd int, fn func() error) error {
	if fd <= 0 {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return // the thread stays locked and ends with the goroutine
		}
		defer unix.Close(home)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		err = fn()
		if unix.Setns(home, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

func (f *forwarder) remove(dev string) {
	if index, ok := f.byName[dev]; ok {
		_ = mapDelete(f.redir, binary.NativeEndian.AppendUint32(nil, uint32(index)))
		delete(f.byName, dev)
	}
}

// counters sums the per-CPU counters.
func (f *forwarder) counters() (ForwardCounters, error) {
	var sums [statCount]uint64
	v := make([]byte, 8*f.nCPU)
	for k := range sums {
		if err := mapLookup(f.stats, binary.NativeEndian.AppendUint32(nil, uint32(k)), v); err != nil {
			return ForwardCounters{}, err
		}
		for c := 0; c < f.nCPU; c++ {
			sums[k] += binary.NativeEndian.Uint64(v[8*c:])
		}
	}
	return ForwardCounters{Forwarded: sums[statForwarded], Missed: sums[statMissed], Passed: sums[statPassed]}, nil
}

func (f *forwarder) close() {
	for _, fd := range []*int{&f.btfFD, &f.redir, &f.stats} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// possibleCPUs counts /sys/devices/system/cpu/possible ("0-3", "0,2-3"):
// a per-CPU map's value has a slot for each.
func possibleCPUs() (int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, found := strings.Cut(r, "-")
		a, err1 := strconv.Atoi(lo)
		z := a
		var err2 error
		if found {
			z, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || z < a {
			return 0, fmt.Errorf("possible CPUs %q: not a list of ranges", b)
		}
		n += z - a + 1
	}
	return n, nil
}
