package ubus

import (
	"encoding"
	"encoding/base64"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// fromReflect converts a Go value to the blobmsg value model by walking it
// with reflection, giving what a round trip through encoding/json and
// ParseJSON would (field names and omitempty from json tags, struct field
// order, sorted map keys, nil slices and pointers as null, []byte as
// base64), without the text in between and without encoding/json in the
// binary. Values with their own MarshalJSON are parsed from its text.
func fromReflect(v reflect.Value, depth int) (any, error) {
	if depth > maxBlobNesting {
		return nil, fmt.Errorf("value nested deeper than %d levels", maxBlobNesting)
	}
	if !v.IsValid() {
		return nil, nil
	}
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, nil
	}
	switch v.Type() {
	case tableType:
		if v.IsNil() {
			return Table{}, nil // MarshalJSON prints a nil Table as {}
		}
		return v.Interface(), nil
	case arrayType:
		if v.IsNil() {
			return Array{}, nil
		}
		return v.Interface(), nil
	}
	if v.Type().Implements(jsonMarshalerType) {
		if v.Kind() == reflect.Interface && v.IsNil() {
			return nil, nil
		}
		b, err := v.Interface().(jsonMarshaler).MarshalJSON()
		if err != nil {
			return nil, err
		}
		return ParseJSON(b)
	}
	if v.Type().Implements(textMarshalerType) {
		b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return nil, err
		}
		return string(b), nil
	}
	switch v.Kind() {
	case reflect.Bool:
		return v.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fromInt64(v.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := v.Uint()
		if u > math.MaxInt64 {
			return float64(u), nil
		}
		return fromInt64(int64(u)), nil
	case reflect.Float32, reflect.Float64:
		return fromFloat(v.Float())
	case reflect.String:
		return v.String(), nil
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return nil, nil
		}
		return fromReflect(v.Elem(), depth+1)
	case reflect.Slice:
		if v.IsNil() {
			return nil, nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return base64.StdEncoding.EncodeToString(v.Bytes()), nil // as encoding/json does
		}
		fallthrough
	case reflect.Array:
		a := make(Array, v.Len())
		for i := range a {
			e, err := fromReflect(v.Index(i), depth+1)
			if err != nil {
				return nil, err
			}
			a[i] = e
		}
		return a, nil
	case reflect.Map:
		if v.IsNil() {
			return nil, nil
		}
		keys := v.MapKeys()
		t := make(Table, 0, len(keys))
		for _, k := range keys {
			name, err := mapKeyName(k)
			if err != nil {
				return nil, err
			}
			e, err := fromReflect(v.MapIndex(k), depth+1)
			if err != nil {
				return nil, err
			}
			t = append(t, Field{Name: name, Value: e})
		}
		sort.Slice(t, func(i, j int) bool { return t[i].Name < t[j].Name })
		return t, nil
	case reflect.Struct:
		fields := structFields(v.Type())
		t := make(Table, 0, len(fields))
		for _, f := range fields {
			fv, ok := fieldByIndex(v, f.index)
			if !ok || f.omitEmpty && isEmpty(fv) {
				continue
			}
			e, err := fromReflect(fv, depth+1)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.name, err)
			}
			t = append(t, Field{Name: f.name, Value: e})
		}
		return t, nil
	}
	return nil, fmt.Errorf("cannot convert %s to blobmsg", v.Type())
}

var (
	tableType         = reflect.TypeOf(Table{})
	arrayType         = reflect.TypeOf(Array{})
	jsonMarshalerType = reflect.TypeOf((*jsonMarshaler)(nil)).Elem()
	textMarshalerType = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
)

// jsonMarshaler is encoding/json's Marshaler, named here so that the
// package stays out of the binary.
type jsonMarshaler interface {
	MarshalJSON() ([]byte, error)
}

// mapKeyName names a map key as encoding/json does: a string as it is,
// else its MarshalText, else a decimal integer.
func mapKeyName(k reflect.Value) (string, error) {
	if k.Kind() == reflect.String {
		return k.String(), nil
	}
	if tm, ok := k.Interface().(encoding.TextMarshaler); ok {
		if k.Kind() == reflect.Pointer && k.IsNil() {
			return "", nil
		}
		b, err := tm.MarshalText()
		return string(b), err
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10), nil
	}
	return "", fmt.Errorf("map key type %s has no JSON form", k.Type())
}

// fromFloat follows what ParseJSON makes of encoding/json's text: whole
// numbers below 1e21 are printed without exponent and parse as integers.
func fromFloat(f float64) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%v has no JSON or blobmsg form", f)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		if f >= math.MinInt64 && f < math.MaxInt64 {
			return fromInt64(int64(f)), nil
		}
	}
	return f, nil
}

type fieldInfo struct {
	name      string
	index     []int
	omitEmpty bool
}

var fieldCache sync.Map // reflect.Type -> []fieldInfo

// structFields lists a struct's JSON fields in order, with embedded
// structs' fields promoted, as encoding/json does (without its rules for
// name clashes, which fastpath's types do not have).
func structFields(t reflect.Type) []fieldInfo {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]fieldInfo)
	}
	var out []fieldInfo
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for _, inner := range structFields(ft) {
					inner.index = append([]int{i}, inner.index...)
					out = append(out, inner)
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out = append(out, fieldInfo{name: name, index: []int{i}, omitEmpty: hasOpt(opts, "omitempty")})
	}
	fieldCache.Store(t, out)
	return out
}

func hasOpt(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// fieldByIndex follows embedded pointers; a nil one hides its fields.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}
