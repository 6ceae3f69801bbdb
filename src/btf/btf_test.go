package btf

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"
)

// builder encodes a BTF blob the way the kernel lays one out: a 24-byte
// header, the type section and the string section. A builder on top of
// another (split BTF) numbers its types after the base's last id and
// its strings after the base's string section, and reuses the base's
// strings as pahole does.
type builder struct {
	order   binary.ByteOrder
	base    *builder
	firstID uint32
	strBase uint32
	types   []byte
	strs    []byte
	strIdx  map[string]uint32
	n       uint32 // types added
}

func newBuilder(order binary.ByteOrder, base *builder) *builder {
	b := &builder{order: order, base: base, firstID: 1, strIdx: map[string]uint32{}}
	if base != nil {
		b.firstID = base.nextID()
		b.strBase = base.strBase + uint32(len(base.strs))
	} else {
		b.strs = []byte{0} // offset 0 is the empty string
		b.strIdx[""] = 0
	}
	return b
}

// nextID is the id the next type added gets.
func (b *builder) nextID() uint32 { return b.firstID + b.n }

// str is the offset of s, added to the string section if new.
func (b *builder) str(s string) uint32 {
	for base := b.base; base != nil; base = base.base {
		if off, ok := base.strIdx[s]; ok {
			return off
		}
	}
	if off, ok := b.strIdx[s]; ok {
		return off
	}
	off := b.strBase + uint32(len(b.strs))
	b.strs = append(append(b.strs, s...), 0)
	b.strIdx[s] = off
	return off
}

func (b *builder) u32(v uint32) { b.types = b.order.(binary.AppendByteOrder).AppendUint32(b.types, v) }

// typ appends a struct btf_type and returns its id.
func (b *builder) typ(name string, kind, vlen uint32, kflag bool, sizeType uint32) uint32 {
	info := vlen&0xffff | kind<<24
	if kflag {
		info |= 1 << 31
	}
	b.u32(b.str(name))
	b.u32(info)
	b.u32(sizeType)
	id := b.nextID()
	b.n++
	return id
}

func (b *builder) Int(name string, size uint32, signed bool) uint32 {
	id := b.typ(name, kindInt, 0, false, size)
	enc := uint32(0)
	if signed {
		enc = 1
	}
	b.u32(enc<<24 | size*8) // encoding, offset 0, bits
	return id
}

func (b *builder) Ptr(to uint32) uint32 { return b.typ("", kindPtr, 0, false, to) }

func (b *builder) Array(elem, index, n uint32) uint32 {
	id := b.typ("", kindArray, 0, false, 0)
	b.u32(elem)
	b.u32(index)
	b.u32(n)
	return id
}

type member struct {
	name   string
	typ    uint32
	bitOff uint32
	bits   uint32 // bitfield size; any non-zero sets the kind_flag
}

func (b *builder) composite(kind uint32, name string, size uint32, ms []member) uint32 {
	kflag := false
	for _, m := range ms {
		kflag = kflag || m.bits != 0
	}
	id := b.typ(name, kind, uint32(len(ms)), kflag, size)
	for _, m := range ms {
		b.u32(b.str(m.name))
		b.u32(m.typ)
		if kflag {
			b.u32(m.bits<<24 | m.bitOff)
		} else {
			b.u32(m.bitOff)
		}
	}
	return id
}

func (b *builder) Struct(name string, size uint32, ms ...member) uint32 {
	return b.composite(kindStruct, name, size, ms)
}

func (b *builder) Union(name string, size uint32, ms ...member) uint32 {
	return b.composite(kindUnion, name, size, ms)
}

type enumerator struct {
	name string
	val  int64
}

func (b *builder) Enum(name string, size uint32, vs ...enumerator) uint32 {
	id := b.typ(name, kindEnum, uint32(len(vs)), false, size)
	for _, v := range vs {
		b.u32(b.str(v.name))
		b.u32(uint32(int32(v.val)))
	}
	return id
}

func (b *builder) Enum64(name string, size uint32, vs ...enumerator) uint32 {
	id := b.typ(name, kindEnum64, uint32(len(vs)), false, size)
	for _, v := range vs {
		b.u32(b.str(v.name))
		b.u32(uint32(uint64(v.val)))
		b.u32(uint32(uint64(v.val) >> 32))
	}
	return id
}

func (b *builder) Typedef(name string, to uint32) uint32 {
	return b.typ(name, kindTypedef, 0, false, to)
}
func (b *builder) Const(to uint32) uint32 { return b.typ("", kindConst, 0, false, to) }
func (b *builder) Func(name string, proto uint32) uint32 {
	return b.typ(name, kindFunc, 0, false, proto)
}

type param struct {
	name string
	typ  uint32
}

func (b *builder) FuncProto(ret uint32, ps ...param) uint32 {
	id := b.typ("", kindFuncProto, uint32(len(ps)), false, ret)
	for _, p := range ps {
		b.u32(b.str(p.name))
		b.u32(p.typ)
	}
	return id
}

// blob is the encoded BTF: header, types, strings.
func (b *builder) blob() []byte {
	o := b.order.(binary.AppendByteOrder)
	h := o.AppendUint16(nil, magic)
	h = append(h, 1, 0) // version, flags
	h = o.AppendUint32(h, headerLen)
	h = o.AppendUint32(h, 0)                    // type_off
	h = o.AppendUint32(h, uint32(len(b.types))) // type_len
	h = o.AppendUint32(h, uint32(len(b.types))) // str_off
	h = o.AppendUint32(h, uint32(len(b.strs)))  // str_len
	return append(append(h, b.types...), b.strs...)
}

// basics are the base types the structs are made of.
type basics struct {
	u8, u16, u32, s32, be16, be32, u16t, u32t, u8t uint32
}

func addBasics(b *builder) basics {
	var t basics
	t.u8 = b.Int("unsigned char", 1, false)
	t.u16 = b.Int("short unsigned int", 2, false)
	t.u32 = b.Int("unsigned int", 4, false)
	t.s32 = b.Int("int", 4, true)
	t.u8t = b.Typedef("u8", t.u8)
	t.u16t = b.Typedef("u16", t.u16)
	t.u32t = b.Typedef("u32", t.u32)
	t.be16 = b.Typedef("__be16", t.u16)
	t.be32 = b.Typedef("__be32", t.u32)
	return t
}

// ids of the types addFlowtable adds, for the tests to check.
type flowIDs struct {
	tuple, rhash, xmit, fn, proto uint32
}

// addFlowtable adds the kernel's flowtable types (include/net/netfilter/
// nf_flow_table.h, Linux 6.11) as pahole encodes them.
func addFlowtable(b *builder, t basics) flowIDs {
	var ids flowIDs
	inAddr := b.Struct("in_addr", 4, member{"s_addr", t.be32, 0, 0})
	v6 := b.Array(t.u8, t.s32, 16)
	in6 := b.Struct("in6_addr", 16, member{"in6_u", v6, 0, 0})
	src := b.Union("", 16, member{"src_v4", inAddr, 0, 0}, member{"src_v6", in6, 0, 0})
	dst := b.Union("", 16, member{"dst_v4", inAddr, 0, 0}, member{"dst_v6", in6, 0, 0})
	ports := b.Struct("", 4, member{"src_port", t.be16, 0, 0}, member{"dst_port", t.be16, 16, 0})
	encapElem := b.Struct("", 4, member{"id", t.u16t, 0, 0}, member{"proto", t.be16, 16, 0})
	encap := b.Array(encapElem, t.s32, 2)
	hash := b.Struct("", 0)
	dstEntry := b.Struct("dst_entry", 128)
	dstPtr := b.Ptr(dstEntry)
	constU32 := b.Const(t.u32t)
	cache := b.Struct("", 16, member{"dst_cache", dstPtr, 0, 0}, member{"dst_cookie", constU32, 64, 0})
	eth := b.Array(t.u8t, t.s32, 6)
	out := b.Struct("", 20,
		member{"ifidx", t.u32t, 0, 0},
		member{"hw_ifidx", t.u32t, 32, 0},
		member{"h_source", eth, 64, 0},
		member{"h_dest", eth, 112, 0})
	tc := b.Struct("", 4, member{"iifidx", t.u32t, 0, 0})
	xmitUnion := b.Union("", 24, member{"", cache, 0, 0}, member{"out", out, 0, 0}, member{"tc", tc, 0, 0})
	ids.tuple = b.Struct("flow_offload_tuple", 80,
		member{"", src, 0, 0},
		member{"", dst, 128, 0},
		member{"", ports, 256, 0},
		member{"iifidx", t.s32, 288, 0},
		member{"l3proto", t.u8t, 320, 0},
		member{"l4proto", t.u8t, 328, 0},
		member{"encap", encap, 336, 0},
		member{"__hash", hash, 400, 0},
		member{"dir", t.u8t, 400, 2},
		member{"xmit_type", t.u8t, 402, 3},
		member{"encap_num", t.u8t, 405, 2},
		member{"in_vlan_ingress", t.u8t, 407, 2},
		member{"mtu", t.u16t, 416, 0},
		member{"", xmitUnion, 448, 0})
	rhashHead := b.nextID()
	b.Struct("rhash_head", 8, member{"next", rhashHead + 1, 0, 0})
	b.Ptr(rhashHead)
	ids.rhash = b.Struct("flow_offload_tuple_rhash", 88,
		member{"node", rhashHead, 0, 0},
		member{"tuple", ids.tuple, 64, 0})
	ids.xmit = b.Enum("flow_offload_xmit_type", 4,
		enumerator{"FLOW_OFFLOAD_XMIT_UNSPEC", 0},
		enumerator{"FLOW_OFFLOAD_XMIT_NEIGH", 1},
		enumerator{"FLOW_OFFLOAD_XMIT_XFRM", 2},
		enumerator{"FLOW_OFFLOAD_XMIT_DIRECT", 3},
		enumerator{"FLOW_OFFLOAD_XMIT_TC", 4})
	b.Enum("negatives", 4,
		enumerator{"NEG_ONE", -1},
		enumerator{"NEG_MIN", -1 << 31},
		enumerator{"POS_MAX", 1<<31 - 1})
	b.Enum64("wide", 8,
		enumerator{"WIDE_SMALL", 7},
		enumerator{"WIDE_BIG", 1<<40 | 5},
		enumerator{"WIDE_ALL", -1},
		enumerator{"WIDE_TOP", -1 << 63})
	xdpMD := b.Struct("xdp_md", 24)
	fib := b.Struct("bpf_fib_lookup", 64)
	opts := b.Struct("bpf_flowtable_opts", 4)
	ids.proto = b.FuncProto(b.Ptr(ids.rhash),
		param{"ctx", b.Ptr(xdpMD)},
		param{"fib_tuple", b.Ptr(fib)},
		param{"opts", b.Ptr(opts)},
		param{"opts_len", t.u32t})
	ids.fn = b.Func("bpf_xdp_flow_lookup", ids.proto)
	// A function whose type is not a prototype, as a corrupt blob might have.
	b.Func("no_proto", t.u32)
	return ids
}

var orders = []struct {
	name  string
	order binary.ByteOrder
}{{"little", binary.LittleEndian}, {"big", binary.BigEndian}}

// flowBlob is one blob with all the types in it.
func flowBlob(order binary.ByteOrder) ([]byte, flowIDs) {
	b := newBuilder(order, nil)
	ids := addFlowtable(b, addBasics(b))
	return b.blob(), ids
}

// splitBlobs puts the basic types (and a stray enum, a struct and some
// strings the split reuses) in a base blob, the rest in a split one.
func splitBlobs(order binary.ByteOrder) (base, split []byte, baseTypes uint32, ids flowIDs) {
	bb := newBuilder(order, nil)
	t := addBasics(bb)
	bb.Enum("base_enum", 4, enumerator{"BASE_ENUM_VAL", -7})
	bb.Struct("base_struct", 12, member{"mtu", t.u32t, 0, 0})
	for _, s := range []string{"ifidx", "h_dest", "tuple"} {
		bb.str(s)
	}
	sb := newBuilder(order, bb)
	ids = addFlowtable(sb, t)
	return bb.blob(), sb.blob(), bb.n, ids
}

func mustParse(t *testing.T, data []byte, base *Spec) *Spec {
	t.Helper()
	s, err := Parse(data, base)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

type memberCase struct {
	strct, path string
	want        Member
}

var memberCases = []memberCase{
	{"flow_offload_tuple", "src_v4", Member{0, 0, 4}},
	{"flow_offload_tuple", "src_v6", Member{0, 0, 16}},
	{"flow_offload_tuple", "src_v6.in6_u", Member{0, 0, 16}},
	{"flow_offload_tuple", "src_v4.s_addr", Member{0, 0, 4}},
	{"flow_offload_tuple", "dst_v4", Member{128, 0, 4}},
	{"flow_offload_tuple", "dst_v6", Member{128, 0, 16}},
	{"flow_offload_tuple", "src_port", Member{256, 0, 2}},
	{"flow_offload_tuple", "dst_port", Member{272, 0, 2}},
	{"flow_offload_tuple", "iifidx", Member{288, 0, 4}},
	{"flow_offload_tuple", "l3proto", Member{320, 0, 1}},
	{"flow_offload_tuple", "l4proto", Member{328, 0, 1}},
	{"flow_offload_tuple", "encap", Member{336, 0, 8}},
	{"flow_offload_tuple", "__hash", Member{400, 0, 0}},
	{"flow_offload_tuple", "dir", Member{400, 2, 1}},
	{"flow_offload_tuple", "xmit_type", Member{402, 3, 1}},
	{"flow_offload_tuple", "encap_num", Member{405, 2, 1}},
	{"flow_offload_tuple", "in_vlan_ingress", Member{407, 2, 1}},
	{"flow_offload_tuple", "mtu", Member{416, 0, 2}},
	{"flow_offload_tuple", "dst_cache", Member{448, 0, 0}},
	{"flow_offload_tuple", "dst_cookie", Member{512, 0, 4}},
	{"flow_offload_tuple", "out", Member{448, 0, 20}},
	{"flow_offload_tuple", "out.ifidx", Member{448, 0, 4}},
	{"flow_offload_tuple", "out.hw_ifidx", Member{480, 0, 4}},
	{"flow_offload_tuple", "out.h_source", Member{512, 0, 6}},
	{"flow_offload_tuple", "out.h_dest", Member{560, 0, 6}},
	{"flow_offload_tuple", "tc", Member{448, 0, 4}},
	{"flow_offload_tuple", "tc.iifidx", Member{448, 0, 4}},
	{"flow_offload_tuple_rhash", "node", Member{0, 0, 8}},
	{"flow_offload_tuple_rhash", "node.next", Member{0, 0, 0}},
	{"flow_offload_tuple_rhash", "tuple", Member{64, 0, 80}},
	{"flow_offload_tuple_rhash", "tuple.src_port", Member{320, 0, 2}},
	{"flow_offload_tuple_rhash", "tuple.xmit_type", Member{466, 3, 1}},
	{"flow_offload_tuple_rhash", "tuple.mtu", Member{480, 0, 2}},
	{"flow_offload_tuple_rhash", "tuple.out.ifidx", Member{512, 0, 4}},
	{"flow_offload_tuple_rhash", "tuple.out.h_source", Member{576, 0, 6}},
	{"flow_offload_tuple_rhash", "tuple.out.h_dest", Member{624, 0, 6}},
}

var enumCases = []struct {
	name string
	want int64
}{
	{"FLOW_OFFLOAD_XMIT_UNSPEC", 0},
	{"FLOW_OFFLOAD_XMIT_NEIGH", 1},
	{"FLOW_OFFLOAD_XMIT_DIRECT", 3},
	{"FLOW_OFFLOAD_XMIT_TC", 4},
	{"NEG_ONE", -1},
	{"NEG_MIN", -1 << 31},
	{"POS_MAX", 1<<31 - 1},
	{"WIDE_SMALL", 7},
	{"WIDE_BIG", 1<<40 | 5},
	{"WIDE_ALL", -1},
	{"WIDE_TOP", -1 << 63},
}

// checkFlow runs the lookups fastpath makes against s.
func checkFlow(t *testing.T, s *Spec, ids flowIDs) {
	t.Helper()
	for _, c := range memberCases {
		got, err := s.MemberOffset(c.strct, c.path)
		if err != nil {
			t.Errorf("MemberOffset(%s, %s): %v", c.strct, c.path, err)
			continue
		}
		if got != c.want {
			t.Errorf("MemberOffset(%s, %s) = %+v, want %+v", c.strct, c.path, got, c.want)
		}
		if got.Byte() != int16(c.want.Offset/8) {
			t.Errorf("MemberOffset(%s, %s).Byte() = %d", c.strct, c.path, got.Byte())
		}
	}
	for name, want := range map[string]uint32{
		"flow_offload_tuple": 80, "flow_offload_tuple_rhash": 88, "rhash_head": 8, "in6_addr": 16, "dst_entry": 128,
	} {
		if got, err := s.StructSize(name); err != nil || got != want {
			t.Errorf("StructSize(%s) = %d, %v; want %d", name, got, err, want)
		}
	}
	id, params, err := s.FuncID("bpf_xdp_flow_lookup")
	if err != nil || id != ids.fn || params != 4 {
		t.Errorf("FuncID(bpf_xdp_flow_lookup) = %d, %d, %v; want %d, 4", id, params, err, ids.fn)
	}
	for _, c := range enumCases {
		if got, err := s.EnumValue(c.name); err != nil || got != c.want {
			t.Errorf("EnumValue(%s) = %d, %v; want %d", c.name, got, err, c.want)
		}
	}
}

func TestLookups(t *testing.T) {
	for _, o := range orders {
		t.Run(o.name, func(t *testing.T) {
			blob, ids := flowBlob(o.order)
			checkFlow(t, mustParse(t, blob, nil), ids)
		})
	}
}

// TestByteOrders checks the two encodings of the same types read the same.
func TestByteOrders(t *testing.T) {
	le, _ := flowBlob(binary.LittleEndian)
	be, _ := flowBlob(binary.BigEndian)
	if le[0] != 0x9f || le[1] != 0xeb || be[0] != 0xeb || be[1] != 0x9f {
		t.Fatalf("magic: % x, % x", le[:2], be[:2])
	}
	l, b := mustParse(t, le, nil), mustParse(t, be, nil)
	for _, c := range memberCases {
		ml, errl := l.MemberOffset(c.strct, c.path)
		mb, errb := b.MemberOffset(c.strct, c.path)
		if ml != mb || (errl == nil) != (errb == nil) {
			t.Errorf("%s.%s: little %+v %v, big %+v %v", c.strct, c.path, ml, errl, mb, errb)
		}
	}
	il, pl, _ := l.FuncID("bpf_xdp_flow_lookup")
	ib, pb, _ := b.FuncID("bpf_xdp_flow_lookup")
	if il != ib || pl != pb {
		t.Errorf("FuncID: little %d %d, big %d %d", il, pl, ib, pb)
	}
	for _, c := range enumCases {
		vl, _ := l.EnumValue(c.name)
		vb, _ := b.EnumValue(c.name)
		if vl != vb {
			t.Errorf("EnumValue(%s): little %d, big %d", c.name, vl, vb)
		}
	}
}

func TestNotFound(t *testing.T) {
	blob, _ := flowBlob(binary.LittleEndian)
	s := mustParse(t, blob, nil)
	wantErr := func(what string, err error, names ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		for _, n := range names {
			if !strings.Contains(err.Error(), n) {
				t.Errorf("%s: error %q does not name %s", what, err, n)
			}
		}
	}
	for _, path := range []string{
		"tun_num", "out.nope", "tuple", "out.ifidx.x", "iifidx.x", "src_v6.nope",
		"", ".", "out.", ".out", "out..ifidx", "tc..iifidx",
	} {
		m, err := s.MemberOffset("flow_offload_tuple", path)
		wantErr("member "+path, err, "flow_offload_tuple", path)
		if m != (Member{}) {
			t.Errorf("MemberOffset(flow_offload_tuple, %q) = %+v with its error", path, m)
		}
	}
	_, err := s.MemberOffset("flow_offload_tuple_rhash", "tuple.out.nope")
	wantErr("nested member", err, "flow_offload_tuple_rhash", "tuple.out.nope")
	_, err = s.MemberOffset("no_such_struct", "mtu")
	wantErr("struct", err, "no_such_struct")
	// A union or an enum is not a struct.
	_, err = s.MemberOffset("flow_offload_xmit_type", "x")
	wantErr("enum as struct", err, "flow_offload_xmit_type")
	_, err = s.StructSize("no_such_struct")
	wantErr("struct size", err, "no_such_struct")
	_, err = s.StructSize("bpf_xdp_flow_lookup")
	wantErr("function as struct", err, "bpf_xdp_flow_lookup")
	_, _, err = s.FuncID("no_such_func")
	wantErr("function", err, "no_such_func")
	_, _, err = s.FuncID("flow_offload_tuple")
	wantErr("struct as function", err, "flow_offload_tuple")
	_, _, err = s.FuncID("no_proto")
	wantErr("function without prototype", err, "no_proto")
	_, err = s.EnumValue("NO_SUCH_ENUMERATOR")
	wantErr("enumerator", err, "NO_SUCH_ENUMERATOR")
	_, err = s.EnumValue("flow_offload_xmit_type")
	wantErr("enum name as enumerator", err, "flow_offload_xmit_type")
}

func TestSplit(t *testing.T) {
	for _, o := range orders {
		t.Run(o.name, func(t *testing.T) {
			baseBlob, splitBlob, baseTypes, ids := splitBlobs(o.order)
			base := mustParse(t, baseBlob, nil)
			if len(base.offs) != int(baseTypes) {
				t.Fatalf("base has %d types, want %d", len(base.offs), baseTypes)
			}
			s := mustParse(t, splitBlob, base)
			if s.firstID != baseTypes+1 {
				t.Errorf("split's first id %d, want %d", s.firstID, baseTypes+1)
			}
			if s.strBase != uint32(len(base.strs)) {
				t.Errorf("split's strings start at %d, want %d", s.strBase, len(base.strs))
			}
			if ids.tuple <= baseTypes || ids.fn != baseTypes+uint32(len(s.offs))-1 {
				t.Fatalf("builder ids: tuple %d fn %d after %d base types", ids.tuple, ids.fn, baseTypes)
			}
			checkFlow(t, s, ids)
			// Types, strings and enumerators of the base, through the split.
			if n, err := s.StructSize("base_struct"); err != nil || n != 12 {
				t.Errorf("StructSize(base_struct) = %d, %v", n, err)
			}
			if m, err := s.MemberOffset("base_struct", "mtu"); err != nil || m != (Member{0, 0, 4}) {
				t.Errorf("MemberOffset(base_struct, mtu) = %+v, %v", m, err)
			}
			if v, err := s.EnumValue("BASE_ENUM_VAL"); err != nil || v != -7 {
				t.Errorf("EnumValue(BASE_ENUM_VAL) = %d, %v", v, err)
			}
			// The base alone knows none of the split's types.
			if _, _, err := base.FuncID("bpf_xdp_flow_lookup"); err == nil {
				t.Error("the base has the split's function")
			}
			if _, err := base.EnumValue("FLOW_OFFLOAD_XMIT_DIRECT"); err == nil {
				t.Error("the base has the split's enumerator")
			}
			// Read without its base, the split's ids and names are wrong.
			alone, err := Parse(splitBlob, nil)
			if err == nil {
				if id, _, err := alone.FuncID("bpf_xdp_flow_lookup"); err == nil && id == ids.fn {
					t.Error("split BTF read alone finds the function at its split id")
				}
			}
		})
	}
}

// TestSplitStrings checks a split's string offsets below the base's
// string section length are the base's strings, and those above its own.
func TestSplitStrings(t *testing.T) {
	bb := newBuilder(binary.LittleEndian, nil)
	u32 := bb.Int("u32", 4, false)
	shared := bb.str("shared")
	sb := newBuilder(binary.LittleEndian, bb)
	own := sb.str("own")
	if shared >= sb.strBase || own != sb.strBase {
		t.Fatalf("builder offsets: shared %d, own %d, split strings from %d", shared, own, sb.strBase)
	}
	sb.Struct("own", 8, member{"shared", u32, 0, 0}, member{"own", u32, 32, 0})
	sb.Struct("shared", 4, member{"u32", u32, 0, 0})
	base := mustParse(t, bb.blob(), nil)
	s := mustParse(t, sb.blob(), base)
	for _, c := range []struct {
		strct, path string
		want        Member
	}{
		{"own", "shared", Member{0, 0, 4}},
		{"own", "own", Member{32, 0, 4}},
		{"shared", "u32", Member{0, 0, 4}},
	} {
		if m, err := s.MemberOffset(c.strct, c.path); err != nil || m != c.want {
			t.Errorf("MemberOffset(%s, %s) = %+v, %v; want %+v", c.strct, c.path, m, err, c.want)
		}
	}
	if got := s.str(shared); got != "shared" {
		t.Errorf("str(%d) = %q, want shared", shared, got)
	}
	if got := s.str(own); got != "own" {
		t.Errorf("str(%d) = %q, want own", own, got)
	}
	if got := s.str(own + 100); got != "" {
		t.Errorf("str past the strings = %q", got)
	}
}

// header rewrites field (byte offset into the header) of a copy of blob.
func header(order binary.ByteOrder, blob []byte, field int, v uint32) []byte {
	b := append([]byte(nil), blob...)
	order.PutUint32(b[field:], v)
	return b
}

const (
	fHdrLen  = 4
	fTypeOff = 8
	fTypeLen = 12
	fStrOff  = 16
	fStrLen  = 20
)

// malformed are blobs Parse must refuse, by what is wrong with them.
func malformed(order binary.ByteOrder) map[string][]byte {
	blob, _ := flowBlob(order)
	typeLen := order.Uint32(blob[fTypeLen:])
	strLen := order.Uint32(blob[fStrLen:])
	m := map[string][]byte{
		"empty":                nil,
		"header only part":     blob[:headerLen-1],
		"bad magic":            append([]byte{0xeb, 0xeb}, blob[2:]...),
		"zero magic":           append([]byte{0, 0}, blob[2:]...),
		"header too short":     header(order, blob, fHdrLen, headerLen-4),
		"header past the blob": header(order, blob, fHdrLen, uint32(len(blob)+1)),
		"header huge":          header(order, blob, fHdrLen, 0xffffffff),
		"types too long":       header(order, blob, fTypeLen, typeLen+strLen+1),
		"types huge":           header(order, blob, fTypeLen, 0xffffffff),
		"types offset huge":    header(order, blob, fTypeOff, 0xfffffff0),
		"strings too long":     header(order, blob, fStrLen, strLen+1),
		"strings offset past":  header(order, blob, fStrOff, typeLen+strLen+1),
		"strings wrap":         header(order, header(order, blob, fStrOff, 0xffffffff), fStrLen, 2),
		"blob cut":             blob[:len(blob)-1],
		"type header cut":      header(order, blob, fTypeLen, typeLen-4),
	}
	// A struct with more members than the types section holds.
	b := newBuilder(order, nil)
	u := b.Int("u32", 4, false)
	b.Struct("s", 8, member{"a", u, 0, 0}, member{"b", u, 32, 0})
	cut := b.blob()
	m["last struct's members cut"] = header(order, cut, fTypeLen, uint32(len(b.types)-12))
	more := append([]byte(nil), cut...)
	order.PutUint32(more[headerLen+16+4:], kindStruct<<24|3) // claims 3 members
	m["struct claims more members"] = more
	for _, kind := range []uint32{0, 20, 31} {
		b := newBuilder(order, nil)
		b.Int("u32", 4, false)
		b.typ("x", kind, 0, false, 0)
		m[fmt.Sprint("unknown kind ", kind)] = b.blob()
	}
	return m
}

func TestMalformed(t *testing.T) {
	for _, o := range orders {
		for name, blob := range malformed(o.order) {
			t.Run(o.name+"/"+name, func(t *testing.T) {
				s, err := Parse(blob, nil)
				if err == nil {
					t.Fatalf("Parse accepted it (%d types)", len(s.offs))
				}
				if !strings.HasPrefix(err.Error(), "btf: ") {
					t.Errorf("error %q", err)
				}
			})
		}
	}
	for n := 0; n < headerLen; n++ {
		blob, _ := flowBlob(binary.LittleEndian)
		if _, err := Parse(blob[:n], nil); err == nil {
			t.Errorf("Parse of %d bytes accepted", n)
		}
	}
}

// query makes every kind of lookup; it must not panic whatever s holds.
func query(s *Spec, name, path string) {
	s.FuncID(name)
	s.StructSize(name)
	s.MemberOffset(name, path)
	s.EnumValue(name)
	for _, c := range memberCases {
		s.MemberOffset(c.strct, c.path)
	}
	for _, c := range enumCases {
		s.EnumValue(c.name)
	}
	s.FuncID("bpf_xdp_flow_lookup")
	s.FuncID("no_proto")
}

// TestTruncatedTypes cuts the types section at every length: Parse either
// refuses it or gives a Spec every lookup can be made on.
func TestTruncatedTypes(t *testing.T) {
	for _, o := range orders {
		blob, _ := flowBlob(o.order)
		typeLen := o.order.Uint32(blob[fTypeLen:])
		accepted := 0
		for n := uint32(0); n <= typeLen; n++ {
			s, err := Parse(header(o.order, blob, fTypeLen, n), nil)
			if err != nil {
				continue
			}
			accepted++
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("%s: types cut to %d bytes: lookup panics: %v", o.name, n, r)
					}
				}()
				query(s, "flow_offload_tuple", "out.h_dest")
			}()
		}
		if accepted == 0 {
			t.Errorf("%s: no cut accepted, not even at type boundaries", o.name)
		}
	}
}

// TestCorruptReferences points members, arrays and qualifiers at types
// that do not exist or at themselves: lookups give errors, not panics or
// endless loops.
func TestCorruptReferences(t *testing.T) {
	b := newBuilder(binary.LittleEndian, nil)
	u32 := b.Int("u32", 4, false)
	loop := b.nextID()
	b.Typedef("loop_a", loop+1)
	b.Typedef("loop_b", loop)
	self := b.nextID()
	b.Array(self, u32, 4)
	b.Struct("dangling", 16,
		member{"missing", 999, 0, 0},
		member{"void", 0, 32, 0},
		member{"looped", loop, 64, 0},
		member{"arr", self, 96, 0})
	b.Func("bad_func", 999)
	b.Func("void_func", 0)
	s := mustParse(t, b.blob(), nil)
	for _, p := range []string{"missing", "void", "missing.x"} {
		if _, err := s.MemberOffset("dangling", p); err == nil {
			t.Errorf("MemberOffset(dangling, %s) found", p)
		}
	}
	if m, err := s.MemberOffset("dangling", "looped"); err != nil || m.Size != 0 || m.Offset != 64 {
		t.Errorf("MemberOffset(dangling, looped) = %+v, %v", m, err)
	}
	if m, err := s.MemberOffset("dangling", "arr"); err != nil || m.Offset != 96 {
		t.Errorf("MemberOffset(dangling, arr) = %+v, %v", m, err)
	}
	for _, f := range []string{"bad_func", "void_func"} {
		if _, _, err := s.FuncID(f); err == nil {
			t.Errorf("FuncID(%s) found", f)
		}
	}
}

// TestAnonymousCycle has a struct whose anonymous members are itself, as
// a corrupt blob might: a missing member must be reported at once.
func TestAnonymousCycle(t *testing.T) {
	b := newBuilder(binary.LittleEndian, nil)
	u32 := b.Int("u32", 4, false)
	self := b.nextID()
	ms := []member{{"x", u32, 0, 0}}
	for i := 0; i < 8; i++ {
		ms = append(ms, member{"", self, 0, 0})
	}
	b.Struct("cycle", 4, ms...)
	s := mustParse(t, b.blob(), nil)
	done := make(chan error, 1)
	go func() {
		_, err := s.MemberOffset("cycle", "nope")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("MemberOffset(cycle, nope) found")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("MemberOffset(cycle, nope) still running after 10s")
	}
	if m, err := s.MemberOffset("cycle", "x"); err != nil || m != (Member{0, 0, 4}) {
		t.Errorf("MemberOffset(cycle, x) = %+v, %v", m, err)
	}
}

func FuzzParse(f *testing.F) {
	for _, o := range orders {
		blob, _ := flowBlob(o.order)
		f.Add(blob, "flow_offload_tuple", "out.h_dest")
		baseBlob, splitBlob, _, _ := splitBlobs(o.order)
		f.Add(baseBlob, "u32", "x")
		f.Add(splitBlob, "bpf_xdp_flow_lookup", "tuple.mtu")
		for _, bad := range malformed(o.order) {
			f.Add(bad, "FLOW_OFFLOAD_XMIT_DIRECT", "")
		}
	}
	baseBlob, _, _, _ := splitBlobs(binary.LittleEndian)
	base, err := Parse(baseBlob, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, name, path string) {
		for _, b := range []*Spec{nil, base} {
			s, err := Parse(data, b)
			if err != nil {
				continue
			}
			query(s, name, path)
		}
	})
}
