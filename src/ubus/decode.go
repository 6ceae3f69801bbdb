package ubus

import (
	"encoding"
	"encoding/base64"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Decode fills target, a non-nil pointer, from v, a value of the blobmsg
// model (as DecodeTable or ParseJSON give it). It is the mirror of FromGo
// and follows encoding/json's Unmarshal: struct fields by their json tags
// (then case-insensitively), embedded structs' fields promoted (nil
// embedded pointers allocated), unknown members ignored, null leaving a
// value as it is (and clearing pointers, slices, maps and interfaces),
// types with UnmarshalJSON given the value's JSON text, strings into types
// with UnmarshalText, base64 strings into []byte, maps
// merged. Numbers go into any numeric field they fit (a double only when
// it is whole, for integer fields). An interface{} field gets the model
// value itself (Table, Array, int32, ...). A value of the wrong kind is an
// error naming the field's path, e.g. "field cut.cuts[2].frames".
func Decode(v any, target any) error {
	rv := reflect.ValueOf(target)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("decoding needs a non-nil pointer, not %T", target)
	}
	return decodeInto(v, rv.Elem(), 0)
}

// decodeError is a decoding failure at a path of fields and indices,
// built from the inside out as the error returns.
type decodeError struct {
	path string
	msg  string
}

func (e *decodeError) Error() string {
	if e.path == "" {
		return e.msg
	}
	return "field " + e.path + ": " + e.msg
}

// within puts the failure inside the field or index seg.
func within(err error, seg string) error {
	if de, ok := err.(*decodeError); ok {
		if de.path != "" && de.path[0] != '[' {
			seg += "."
		}
		de.path = seg + de.path
	}
	return err
}

func mismatch(v any, t reflect.Type) error {
	return &decodeError{msg: fmt.Sprintf("cannot decode %s into %s", describeValue(v), t)}
}

func describeValue(v any) string {
	switch v := v.(type) {
	case Table:
		return "an object"
	case Array:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int8, int16, int32, int64, float64:
		return fmt.Sprintf("the number %v", v)
	}
	return fmt.Sprintf("a %T", v)
}

var (
	jsonUnmarshalerType = reflect.TypeOf((*jsonUnmarshaler)(nil)).Elem()
	textUnmarshalerType = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

// jsonUnmarshaler is encoding/json's Unmarshaler, named here so that the
// package stays out of the binary.
type jsonUnmarshaler interface {
	UnmarshalJSON([]byte) error
}

func decodeInto(v any, rv reflect.Value, depth int) error {
	if depth > maxBlobNesting {
		return &decodeError{msg: fmt.Sprintf("nested deeper than %d levels", maxBlobNesting)}
	}
	t := rv.Type()
	if rv.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(jsonUnmarshalerType) {
		b, err := AppendJSON(nil, v) // "null" too, as encoding/json passes it
		if err == nil {
			err = rv.Addr().Interface().(jsonUnmarshaler).UnmarshalJSON(b)
		}
		if err != nil {
			return &decodeError{msg: err.Error()}
		}
		return nil
	}
	if v == nil {
		switch rv.Kind() {
		case reflect.Interface, reflect.Pointer, reflect.Map, reflect.Slice:
			rv.SetZero()
		}
		return nil
	}
	switch t {
	case tableType, arrayType:
		if reflect.TypeOf(v) != t {
			return mismatch(v, t)
		}
		rv.Set(reflect.ValueOf(v))
		return nil
	}
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			rv.Set(reflect.New(t.Elem()))
		}
		return decodeInto(v, rv.Elem(), depth+1)
	}
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		s, ok := v.(string)
		if !ok {
			return mismatch(v, t)
		}
		if err := rv.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return &decodeError{msg: err.Error()}
		}
		return nil
	}
	switch rv.Kind() {
	case reflect.Interface:
		if rv.NumMethod() != 0 {
			return mismatch(v, t)
		}
		rv.Set(reflect.ValueOf(v))
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return mismatch(v, t)
		}
		rv.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := toInt64(v)
		if !ok {
			return mismatch(v, t)
		}
		if rv.OverflowInt(n) {
			return &decodeError{msg: fmt.Sprintf("%d does not fit %s", n, t)}
		}
		rv.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, ok := toUint64(v)
		if !ok {
			if _, isInt := toInt64(v); isInt {
				return &decodeError{msg: fmt.Sprintf("%v does not fit %s", v, t)}
			}
			return mismatch(v, t)
		}
		if rv.OverflowUint(n) {
			return &decodeError{msg: fmt.Sprintf("%d does not fit %s", n, t)}
		}
		rv.SetUint(n)
	case reflect.Float32, reflect.Float64:
		f, ok := toFloat64(v)
		if !ok {
			return mismatch(v, t)
		}
		if rv.OverflowFloat(f) {
			return &decodeError{msg: fmt.Sprintf("%v does not fit %s", f, t)}
		}
		rv.SetFloat(f)
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			return mismatch(v, t)
		}
		rv.SetString(s)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			s, ok := v.(string)
			if !ok {
				return mismatch(v, t)
			}
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return &decodeError{msg: "not base64: " + err.Error()}
			}
			rv.SetBytes(b)
			return nil
		}
		a, ok := v.(Array)
		if !ok {
			return mismatch(v, t)
		}
		s := reflect.MakeSlice(t, len(a), len(a))
		for i, e := range a {
			if err := decodeInto(e, s.Index(i), depth+1); err != nil {
				return within(err, "["+strconv.Itoa(i)+"]")
			}
		}
		rv.Set(s)
	case reflect.Array:
		a, ok := v.(Array)
		if !ok {
			return mismatch(v, t)
		}
		for i := 0; i < rv.Len(); i++ {
			if i >= len(a) {
				rv.Index(i).SetZero()
				continue
			}
			if err := decodeInto(a[i], rv.Index(i), depth+1); err != nil {
				return within(err, "["+strconv.Itoa(i)+"]")
			}
		}
	case reflect.Map:
		tab, ok := v.(Table)
		if !ok {
			return mismatch(v, t)
		}
		if rv.IsNil() {
			rv.Set(reflect.MakeMapWithSize(t, len(tab)))
		}
		for _, f := range tab {
			seg := "[" + strconv.Quote(f.Name) + "]"
			k, err := mapKey(f.Name, t.Key())
			if err != nil {
				return within(err, seg)
			}
			e := reflect.New(t.Elem()).Elem()
			if err := decodeInto(f.Value, e, depth+1); err != nil {
				return within(err, seg)
			}
			rv.SetMapIndex(k, e)
		}
	case reflect.Struct:
		tab, ok := v.(Table)
		if !ok {
			return mismatch(v, t)
		}
		fields := structFields(t)
		for i, f := range tab {
			fi := findField(fields, f.Name, i)
			if fi == nil {
				continue // unknown members are ignored, as encoding/json does
			}
			fv, err := fieldForWrite(rv, fi.index)
			if err == nil {
				err = decodeInto(f.Value, fv, depth+1)
			}
			if err != nil {
				return within(err, fi.name)
			}
		}
	default:
		return mismatch(v, t)
	}
	return nil
}

// findField finds the field a member names: exactly, then ignoring case,
// as encoding/json does. Members usually come in field order, so the
// member's own index is tried first.
func findField(fields []fieldInfo, name string, hint int) *fieldInfo {
	if hint < len(fields) && fields[hint].name == name {
		return &fields[hint]
	}
	for i := range fields {
		if fields[i].name == name {
			return &fields[i]
		}
	}
	for i := range fields {
		if strings.EqualFold(fields[i].name, name) {
			return &fields[i]
		}
	}
	return nil
}

// fieldForWrite follows index, allocating nil embedded pointers.
func fieldForWrite(v reflect.Value, index []int) (reflect.Value, error) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{}, &decodeError{msg: fmt.Sprintf("cannot set the embedded pointer to unexported struct %s", v.Type().Elem())}
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, nil
}

// mapKey converts an object key to a map key as encoding/json does: by
// UnmarshalText, as a string, or as a decimal integer.
func mapKey(name string, kt reflect.Type) (reflect.Value, error) {
	if reflect.PointerTo(kt).Implements(textUnmarshalerType) {
		k := reflect.New(kt)
		if err := k.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(name)); err != nil {
			return reflect.Value{}, &decodeError{msg: err.Error()}
		}
		return k.Elem(), nil
	}
	k := reflect.New(kt).Elem()
	switch kt.Kind() {
	case reflect.String:
		k.SetString(name)
		return k, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(name, 10, 64)
		if err == nil && !k.OverflowInt(n) {
			k.SetInt(n)
			return k, nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := strconv.ParseUint(name, 10, 64)
		if err == nil && !k.OverflowUint(n) {
			k.SetUint(n)
			return k, nil
		}
	}
	return reflect.Value{}, &decodeError{msg: fmt.Sprintf("key %q is not a %s", name, kt)}
}

func toInt64(v any) (int64, bool) {
	switch v := v.(type) {
	case int8:
		return int64(v), true
	case int16:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case float64:
		if v == math.Trunc(v) && v >= math.MinInt64 && v < math.MaxInt64 {
			return int64(v), true
		}
	}
	return 0, false
}

func toUint64(v any) (uint64, bool) {
	if f, ok := v.(float64); ok {
		switch {
		case f != math.Trunc(f) || f < 0 || f > math.MaxUint64:
			return 0, false
		case f == math.MaxUint64:
			// 2^64: how FromGo's double rounds the largest uint64 values
			return math.MaxUint64, true
		}
		return uint64(f), true
	}
	n, ok := toInt64(v)
	if !ok || n < 0 {
		return 0, false
	}
	return uint64(n), true
}

func toFloat64(v any) (float64, bool) {
	if f, ok := v.(float64); ok {
		return f, true
	}
	n, ok := toInt64(v)
	return float64(n), ok
}
