package ubus

import (
	"encoding/binary"
	"fmt"
	"math"
)

// BlobmsgType is a blobmsg attribute type, as in libubox's blobmsg.h.
type BlobmsgType uint8

// Blobmsg types. Bool shares INT8's number: libubox prints INT8 as a boolean.
const (
	TypeUnspec BlobmsgType = 0
	TypeArray  BlobmsgType = 1
	TypeTable  BlobmsgType = 2
	TypeString BlobmsgType = 3
	TypeInt64  BlobmsgType = 4
	TypeInt32  BlobmsgType = 5
	TypeInt16  BlobmsgType = 6
	TypeBool   BlobmsgType = 7
	TypeInt8   BlobmsgType = 7
	TypeDouble BlobmsgType = 8
)

// String gives the type's name as `ubus -v list` prints it.
func (t BlobmsgType) String() string {
	switch t {
	case TypeUnspec:
		return "(unknown)"
	case TypeArray:
		return "Array"
	case TypeTable:
		return "Table"
	case TypeString:
		return "String"
	case TypeInt64:
		return "Integer"
	case TypeInt32:
		return "Integer"
	case TypeInt16:
		return "Integer"
	case TypeBool:
		return "Boolean"
	case TypeDouble:
		return "Double"
	}
	return fmt.Sprintf("type %d", uint8(t))
}

// Field is one named blobmsg value of a Table.
type Field struct {
	Name  string
	Value any
}

// Table is a blobmsg table with its fields in wire order. Values are string,
// bool, int16, int32, int64, float64, nil (UNSPEC), Table or Array.
type Table []Field

// Array is a blobmsg array.
type Array []any

// Get returns the value of the first field with that name.
func (t Table) Get(name string) (any, bool) {
	for _, f := range t {
		if f.Name == name {
			return f.Value, true
		}
	}
	return nil, false
}

// Map returns the table as a map of plain Go values (nested tables become
// maps, arrays slices); duplicate names keep the last value.
func (t Table) Map() map[string]any {
	m := make(map[string]any, len(t))
	for _, f := range t {
		m[f.Name] = plain(f.Value)
	}
	return m
}

func plain(v any) any {
	switch v := v.(type) {
	case Table:
		return v.Map()
	case Array:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = plain(e)
		}
		return s
	}
	return v
}

// EncodeTable encodes the fields of a table as a blobmsg attribute list, the
// payload of a ubus DATA attribute.
func EncodeTable(t Table) ([]byte, error) {
	return appendFields(nil, t, 0)
}

// DecodeTable decodes a blobmsg attribute list, the payload of a ubus DATA
// attribute.
func DecodeTable(b []byte) (Table, error) {
	return decodeTable(b, 0)
}

func appendFields(b []byte, t Table, depth int) ([]byte, error) {
	var err error
	for _, f := range t {
		if b, err = appendBlobmsg(b, f.Name, f.Value, depth); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// appendBlobmsg appends one blobmsg attribute: header, be16 name length,
// name, NUL, padding to 4, then the value.
func appendBlobmsg(b []byte, name string, v any, depth int) ([]byte, error) {
	if depth > maxBlobNesting {
		return nil, fmt.Errorf("blobmsg %q: nested deeper than %d levels", name, maxBlobNesting)
	}
	if len(name) > math.MaxUint16 {
		return nil, fmt.Errorf("blobmsg name %.20q...: %d bytes, at most %d", name, len(name), math.MaxUint16)
	}
	b, start := beginAttr(b)
	b = binary.BigEndian.AppendUint16(b, uint16(len(name)))
	b = append(b, name...)
	b = append(b, 0)
	b = appendPadding(b, 2+len(name)+1)
	var typ BlobmsgType
	switch v := v.(type) {
	case nil:
		typ = TypeUnspec
	case bool:
		typ = TypeBool
		if v {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	case int8:
		typ = TypeInt8
		b = append(b, byte(v))
	case int16:
		typ = TypeInt16
		b = binary.BigEndian.AppendUint16(b, uint16(v))
	case int32:
		typ = TypeInt32
		b = binary.BigEndian.AppendUint32(b, uint32(v))
	case int64:
		typ = TypeInt64
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	case float64:
		typ = TypeDouble
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(v))
	case string:
		typ = TypeString
		b = append(b, v...)
		b = append(b, 0)
	case Table:
		typ = TypeTable
		var err error
		if b, err = appendFields(b, v, depth+1); err != nil {
			return nil, err
		}
	case Array:
		typ = TypeArray
		var err error
		for _, e := range v {
			if b, err = appendBlobmsg(b, "", e, depth+1); err != nil {
				return nil, err
			}
		}
	default:
		c, err := FromGo(v)
		if err != nil {
			return nil, fmt.Errorf("blobmsg %q: %w", name, err)
		}
		b = b[:start]
		return appendBlobmsg(b, name, c, depth)
	}
	return endAttr(b, start, uint8(typ), true), nil
}

func decodeTable(b []byte, depth int) (Table, error) {
	attrs, err := splitAttrs(b)
	if err != nil {
		return nil, err
	}
	t := make(Table, 0, len(attrs))
	for _, a := range attrs {
		name, v, err := decodeBlobmsg(a, depth)
		if err != nil {
			return nil, err
		}
		t = append(t, Field{Name: name, Value: v})
	}
	return t, nil
}

func decodeBlobmsg(a rawAttr, depth int) (string, any, error) {
	if depth > maxBlobNesting {
		return "", nil, fmt.Errorf("blobmsg nested deeper than %d levels", maxBlobNesting)
	}
	if !a.extended {
		return "", nil, fmt.Errorf("blob attribute id %d inside blobmsg data lacks the extended (blobmsg) flag", a.id)
	}
	if len(a.data) < 2 {
		return "", nil, fmt.Errorf("blobmsg attribute of %d bytes has no name header", len(a.data))
	}
	nameLen := int(binary.BigEndian.Uint16(a.data))
	hdr := align4(2 + nameLen + 1)
	if hdr > len(a.data) || a.data[2+nameLen] != 0 {
		return "", nil, fmt.Errorf("blobmsg name of %d bytes does not fit (or lacks its NUL) in a %d-byte attribute", nameLen, len(a.data))
	}
	name := string(a.data[2 : 2+nameLen])
	d := a.data[hdr:]
	typ := BlobmsgType(a.id)
	if n, fixed := fixedSize[typ]; fixed && len(d) != n {
		return "", nil, fmt.Errorf("blobmsg %q: %s of %d bytes, want %d", name, typeName(typ), len(d), n)
	}
	switch typ {
	case TypeUnspec:
		if len(d) != 0 {
			return "", nil, fmt.Errorf("blobmsg %q: unspec (null) with %d bytes of data, want none", name, len(d))
		}
		return name, nil, nil
	case TypeBool:
		return name, d[0] != 0, nil
	case TypeInt16:
		return name, int16(binary.BigEndian.Uint16(d)), nil
	case TypeInt32:
		return name, int32(binary.BigEndian.Uint32(d)), nil
	case TypeInt64:
		return name, int64(binary.BigEndian.Uint64(d)), nil
	case TypeDouble:
		return name, math.Float64frombits(binary.BigEndian.Uint64(d)), nil
	case TypeString:
		if len(d) == 0 || d[len(d)-1] != 0 {
			return "", nil, fmt.Errorf("blobmsg %q: string without its terminating NUL", name)
		}
		return name, string(d[:len(d)-1]), nil
	case TypeTable:
		t, err := decodeTable(d, depth+1)
		if err != nil {
			return "", nil, fmt.Errorf("table %q: %w", name, err)
		}
		return name, t, nil
	case TypeArray:
		attrs, err := splitAttrs(d)
		if err != nil {
			return "", nil, fmt.Errorf("array %q: %w", name, err)
		}
		arr := make(Array, 0, len(attrs))
		for i, e := range attrs {
			_, v, err := decodeBlobmsg(e, depth+1)
			if err != nil {
				return "", nil, fmt.Errorf("array %q element %d: %w", name, i, err)
			}
			arr = append(arr, v)
		}
		return name, arr, nil
	}
	return "", nil, fmt.Errorf("blobmsg %q: unknown type %d", name, typ)
}

// fixedSize is the payload length of each fixed-size blobmsg type.
var fixedSize = map[BlobmsgType]int{TypeInt8: 1, TypeInt16: 2, TypeInt32: 4, TypeInt64: 8, TypeDouble: 8}

func typeName(t BlobmsgType) string {
	switch t {
	case TypeInt8:
		return "int8/bool"
	case TypeInt16:
		return "int16"
	case TypeInt32:
		return "int32"
	case TypeInt64:
		return "int64"
	case TypeDouble:
		return "double"
	}
	return t.String()
}
