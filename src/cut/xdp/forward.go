package xdp


// The forward stage: after the cut stage let a frame pass, it asks the
// kernel's flowtable for the frame's flow (bpf_xdp_flow_lookup, Linux 6.11
// and later) and, for a flow the flowtable would send out directly on an
// Ethernet device, does in the driver what the flowtable's hook would do
// for the skb: the NAT of the flow's other direction, TTL or hop limit,
// the checksums, the MAC addresses, and the transmit on the out device
// (bpf_redirect_map, only to devices in the redirect map: those that run
// this program, so their driver takes redirected frames). Everything else
// passes to the kernel: first packets, TCP FIN and RST (the flowtable
// tears the flow down on them), IPv4 options and fragments, frames over
// the flow's MTU, TTL 1, VLAN and PPPoE frames, flows that leave through
// a VLAN, PPPoE or tunnel (encap), and neighbour or xfrm transmits.
//
// The kfunc refreshes the flow's timeout, as the flowtable's hook does;
// conntrack's counters do not see these frames.

// Layout is what the forward stage needs of the running kernel: the
// kfunc's BTF id and where struct flow_offload_tuple keeps each field.
// Offsets are in bytes from the start of a tuple; bitfields give their
// byte, shift and width as the kernel's byte order lays them out.
type Layout struct {
	KfuncID      int32
	KfuncFDIndex int16 // index of the kfunc's BTF in the load's fd_array; 0 for vmlinux

	HashSize  int16 // sizeof(struct flow_offload_tuple_rhash): from one direction to the other
	Tuple     int16 // offsetof(struct flow_offload_tuple_rhash, tuple)
	TupleSize int16

	Src, Dst, Sport, Dport int16
	Dir, XmitType          Bitfield
	EncapNum               Bitfield
	TunNum                 Bitfield // Linux 7 and later; Width 0 where the kernel has none
	MTU                    int16    // u16
	Iifidx                 int16    // int
	OutIfidx               int16    // u32
	HSource, HDest         int16    // 6 bytes each

	XmitNeigh  int32 // FLOW_OFFLOAD_XMIT_NEIGH
	XmitDirect int32 // FLOW_OFFLOAD_XMIT_DIRECT
}

// Bitfield is a bitfield within one byte: (byte >> Shift) & (1<<Width - 1).
type Bitfield struct {
	Byte         int16
	Shift, Width uint8
}

// Stack of the forward stage, below the cut's key (fp-40 .. fp-1).
const (
	fibAt       = -104 // struct bpf_fib_lookup, 64 bytes
	fibSize     = 64
	optsAt      = -112 // struct bpf_flowtable_opts, and 4 spare bytes
	lenAt       = -108 // the frame's L3 length, in the CPU's order (u32)
	maxTuple    = 160  // the two tuple copies, the new header and the egress fit in 512 bytes
	egDst       = 4    // the egress on the stack: ifindex, destination MAC, source MAC
	egSrc       = 10
	afINET      = 2
	afINET6     = 10
	xdpAbort    = 0
	xdpRedirect = 4
	tcpFinRst   = 0x05
)

// Per-CPU counters the forward stage keeps (the stats map's keys).
const (
	statForwarded = 0 // frames sent out by the program
	statMissed    = 1 // TCP/UDP frames the flowtable had no flow for
	statPassed    = 2 // frames of a flow in the flowtable that the stage left to the kernel
	statCount     = 3
)

// ForwardCounters count frames of TCP and UDP the forward stage looked
// up: sent out in the driver, found in no flow, or of a flow it left to
// the kernel's flowtable (see forward.go's list).
type ForwardCounters struct {
	Forwarded uint64 `json:"forwarded"`
	Missed    uint64 `json:"missed"`
	Passed    uint64 `json:"passed"`
}

// forwardSpec is what the program needs to forward.
type forwardSpec struct {
	layout Layout
	maps   forwardMaps
}

// forwardMaps are the file descriptors the forward stage refers to.
type forwardMaps struct {
	redirect int32 // BPF_MAP_TYPE_DEVMAP_HASH of the devices that run the program
	stats    int32 // BPF_MAP_TYPE_PERCPU_ARRAY of statCount u64s
}
