// Package btf reads the kernel's BTF type information (/sys/kernel/btf):
// a function's type id, a struct's size, a member's offset and an
// enumerator's value. It knows just enough of the format to lay out an
// eBPF program for the running kernel without clang or CO-RE.
package btf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Kinds of type (include/uapi/linux/btf.h).
const (
	kindInt       = 1
	kindPtr       = 2
	kindArray     = 3
	kindStruct    = 4
	kindUnion     = 5
	kindEnum      = 6
	kindFwd       = 7
	kindTypedef   = 8
	kindVolatile  = 9
	kindConst     = 10
	kindRestrict  = 11
	kindFunc      = 12
	kindFuncProto = 13
	kindVar       = 14
	kindDatasec   = 15
	kindFloat     = 16
	kindDeclTag   = 17
	kindTypeTag   = 18
	kindEnum64    = 19
)

const (
	magic     = 0xeb9f
	headerLen = 24
	typeLen   = 12 // struct btf_type
	maxDepth  = 16 // nesting of anonymous members and qualifiers followed
)

// Spec is one BTF blob, or a module's split BTF on top of vmlinux's.
type Spec struct {
	order   binary.ByteOrder
	base    *Spec // vmlinux under a module's split BTF; nil for vmlinux
	firstID uint32
	types   []byte
	strs    []byte
	strBase uint32   // string offsets below it are the base's
	offs    []uint32 // offset in types of each type, from firstID on
}

// Parse reads a BTF blob. For a module's BTF, base is vmlinux's, parsed
// first: the module's type ids and string offsets continue the base's.
func Parse(data []byte, base *Spec) (*Spec, error) {
	if len(data) < headerLen {
		return nil, errors.New("btf: shorter than its header")
	}
	var order binary.ByteOrder = binary.LittleEndian
	if binary.BigEndian.Uint16(data) == magic {
		order = binary.BigEndian
	} else if binary.LittleEndian.Uint16(data) != magic {
		return nil, errors.New("btf: no BTF magic")
	}
	hdr := order.Uint32(data[4:])
	typeOff, tLen := order.Uint32(data[8:]), order.Uint32(data[12:])
	strOff, sLen := order.Uint32(data[16:]), order.Uint32(data[20:])
	body := data[min(uint64(hdr), uint64(len(data))):] // not int: negative on 32-bit
	if hdr < headerLen || uint64(typeOff)+uint64(tLen) > uint64(len(body)) || uint64(strOff)+uint64(sLen) > uint64(len(body)) {
		return nil, errors.New("btf: sections outside the blob")
	}
	s := &Spec{order: order, base: base, firstID: 1, types: body[typeOff : typeOff+tLen], strs: body[strOff : strOff+sLen]}
	if base != nil {
		s.firstID = base.firstID + uint32(len(base.offs))
		s.strBase = base.strBase + uint32(len(base.strs))
	}
	for off := 0; off < len(s.types); {
		if off+typeLen > len(s.types) {
			return nil, fmt.Errorf("btf: type %d cut short", s.firstID+uint32(len(s.offs)))
		}
		s.offs = append(s.offs, uint32(off))
		n, err := s.extra(off)
		if err != nil {
			return nil, err
		}
		if off+typeLen+n > len(s.types) {
			return nil, fmt.Errorf("btf: type %d cut short", s.firstID+uint32(len(s.offs))-1)
		}
		off += typeLen + n
	}
	return s, nil
}

// extra is the size of the kind-specific data after the type at off.
func (s *Spec) extra(off int) (int, error) {
	info := s.order.Uint32(s.types[off+4:])
	vlen := int(info & 0xffff)
	switch kind := info >> 24 & 0x1f; kind {
	case kindInt, kindVar, kindDeclTag:
		return 4, nil
	case kindPtr, kindFwd, kindTypedef, kindVolatile, kindConst, kindRestrict, kindFunc, kindFloat, kindTypeTag:
		return 0, nil
	case kindArray:
		return 12, nil
	case kindStruct, kindUnion, kindDatasec, kindEnum64:
		return 12 * vlen, nil
	case kindEnum, kindFuncProto:
		return 8 * vlen, nil
	default:
		return 0, fmt.Errorf("btf: unknown kind %d at type %d", kind, s.firstID+uint32(len(s.offs))-1)
	}
}

type typ struct {
	s      *Spec
	off    int // of its struct btf_type in s.types
	name   string
	kind   uint32
	vlen   int
	bitfld bool   // kind_flag: struct members carry bitfield sizes
	sizeTy uint32 // size, or the type it refers to
}

func (s *Spec) str(off uint32) string {
	if s.base != nil && off < s.strBase {
		return s.base.str(off)
	}
	off -= s.strBase
	if off >= uint32(len(s.strs)) {
		return ""
	}
	b := s.strs[off:]
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func (s *Spec) byID(id uint32) (typ, error) {
	if id < s.firstID {
		if s.base != nil {
			return s.base.byID(id)
		}
		return typ{}, fmt.Errorf("btf: no type %d", id)
	}
	i := id - s.firstID
	if i >= uint32(len(s.offs)) {
		return typ{}, fmt.Errorf("btf: no type %d", id)
	}
	off := int(s.offs[i])
	info := s.order.Uint32(s.types[off+4:])
	return typ{s: s, off: off, name: s.str(s.order.Uint32(s.types[off:])), kind: info >> 24 & 0x1f,
		vlen: int(info & 0xffff), bitfld: info>>31 == 1, sizeTy: s.order.Uint32(s.types[off+8:])}, nil
}

// find returns the id of the first type of kind named name, in this blob
// before its base.
func (s *Spec) find(kind uint32, name string) (uint32, typ, error) {
	for i := range s.offs {
		id := s.firstID + uint32(i)
		t, err := s.byID(id)
		if err == nil && t.kind == kind && t.name == name {
			return id, t, nil
		}
	}
	if s.base != nil {
		return s.base.find(kind, name)
	}
	return 0, typ{}, fmt.Errorf("btf: the kernel has no %s %s", kindName(kind), name)
}

func kindName(k uint32) string {
	switch k {
	case kindStruct:
		return "struct"
	case kindFunc:
		return "function"
	case kindEnum:
		return "enum"
	}
	return fmt.Sprintf("kind %d", k)
}

// FuncID is the type id of function name, and how many parameters its
// prototype has: the id a kfunc call names.
func (s *Spec) FuncID(name string) (id uint32, params int, err error) {
	id, t, err := s.find(kindFunc, name)
	if err != nil {
		return 0, 0, err
	}
	proto, err := s.byID(t.sizeTy)
	if err != nil || proto.kind != kindFuncProto {
		return 0, 0, fmt.Errorf("btf: function %s has no prototype", name)
	}
	return id, proto.vlen, nil
}

// StructSize is the size in bytes of struct name.
func (s *Spec) StructSize(name string) (uint32, error) {
	_, t, err := s.find(kindStruct, name)
	if err != nil {
		return 0, err
	}
	return t.sizeTy, nil
}

// Member is where a struct member lies, in bits from the struct's start;
// Bits is the width of a bitfield, 0 for a whole member, and Size the
// member's type's size in bytes (0 where BTF gives none, as for pointers).
type Member struct {
	Offset uint32
	Bits   uint32
	Size   uint32
}

// Byte is the member's offset in bytes.
func (m Member) Byte() int16 { return int16(m.Offset / 8) }

// MemberOffset finds path ("tuple.out.ifidx") in struct name. Members of
// anonymous structs and unions are found as the C compiler finds them.
func (s *Spec) MemberOffset(name, path string) (Member, error) {
	_, t, err := s.find(kindStruct, name)
	if err != nil {
		return Member{}, err
	}
	var at Member
	for _, part := range strings.Split(path, ".") {
		m, mt, ok := t.member(part, 0, map[typeAt]bool{})
		if !ok {
			return Member{}, fmt.Errorf("btf: struct %s has no member %s", name, path)
		}
		at.Offset += m.Offset
		at.Bits = m.Bits
		t = mt
	}
	at.Size = t.size(0)
	return at, nil
}

// typeAt identifies a type: its blob and its offset there.
type typeAt struct {
	s   *Spec
	off int
}

// member finds name among t's members, looking into anonymous ones;
// seen holds the types already looked into, each searched once however
// often corrupt BTF nests it.
func (t typ) member(name string, depth int, seen map[typeAt]bool) (Member, typ, bool) {
	t, err := t.resolve()
	if err != nil || (t.kind != kindStruct && t.kind != kindUnion) || depth > maxDepth || name == "" || seen[typeAt{t.s, t.off}] {
		return Member{}, typ{}, false
	}
	seen[typeAt{t.s, t.off}] = true
	s := t.s
	for i := 0; i < t.vlen; i++ {
		p := t.off + typeLen + 12*i
		mname := s.str(s.order.Uint32(s.types[p:]))
		mtype := s.order.Uint32(s.types[p+4:])
		raw := s.order.Uint32(s.types[p+8:])
		m := Member{Offset: raw}
		if t.bitfld {
			m = Member{Offset: raw & 0xffffff, Bits: raw >> 24}
		}
		mt, err := s.byID(mtype)
		if err != nil {
			continue
		}
		if mname == name {
			return m, mt, true
		}
		if mname == "" {
			if in, it, ok := mt.member(name, depth+1, seen); ok {
				in.Offset += m.Offset
				return in, it, true
			}
		}
	}
	return Member{}, typ{}, false
}

// size is the type's size in bytes, 0 when it has none.
func (t typ) size(depth int) uint32 {
	t, err := t.resolve()
	if err != nil || depth > maxDepth {
		return 0
	}
	switch t.kind {
	case kindInt, kindStruct, kindUnion, kindEnum, kindEnum64, kindFloat:
		return t.sizeTy
	case kindArray:
		p := t.off + typeLen
		elem, err := t.s.byID(t.s.order.Uint32(t.s.types[p:]))
		if err != nil {
			return 0
		}
		return elem.size(depth+1) * t.s.order.Uint32(t.s.types[p+8:])
	}
	return 0
}

// resolve follows typedefs and qualifiers to the type they name.
func (t typ) resolve() (typ, error) {
	for i := 0; i < maxDepth; i++ {
		switch t.kind {
		case kindTypedef, kindVolatile, kindConst, kindRestrict, kindTypeTag:
			var err error
			if t, err = t.s.byID(t.sizeTy); err != nil {
				return t, err
			}
		default:
			return t, nil
		}
	}
	return t, errors.New("btf: qualifiers nest too deep")
}

// EnumValue is the value of enumerator name in any enum.
func (s *Spec) EnumValue(name string) (int64, error) {
	for i := range s.offs {
		t, err := s.byID(s.firstID + uint32(i))
		if err != nil || (t.kind != kindEnum && t.kind != kindEnum64) {
			continue
		}
		step := 8
		if t.kind == kindEnum64 {
			step = 12
		}
		for j := 0; j < t.vlen; j++ {
			p := t.off + typeLen + step*j
			if s.str(s.order.Uint32(s.types[p:])) != name {
				continue
			}
			v := int64(int32(s.order.Uint32(s.types[p+4:])))
			if t.kind == kindEnum64 {
				v = int64(uint64(s.order.Uint32(s.types[p+8:]))<<32 | uint64(s.order.Uint32(s.types[p+4:])))
			}
			return v, nil
		}
	}
	if s.base != nil {
		return s.base.EnumValue(name)
	}
	return 0, fmt.Errorf("btf: the kernel has no enumerator %s", name)
}
