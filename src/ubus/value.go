package ubus

import (
	"fmt"
	"math"
	"reflect"
)

// FromGo converts a Go value to the blobmsg value model the way libubox's
// blobmsg_add_json does after encoding/json (json.RawMessage and other
// MarshalJSON types through ParseJSON): objects keep their key order
// (struct field order), integral numbers that fit int32 become INT32 and
// larger ones INT64, other numbers DOUBLE, booleans INT8, null UNSPEC.
// Values already in the model (Table, Array, string, bool, int16, int32,
// int64, float64, nil) are returned as they are.
func FromGo(v any) (any, error) {
	switch v := v.(type) {
	case nil, Table, Array, string, bool, int8, int16, int32, int64, float64:
		return v, nil
	case int:
		return fromInt64(int64(v)), nil
	case uint8:
		return int32(v), nil
	case uint16:
		return int32(v), nil
	case uint32:
		return fromInt64(int64(v)), nil
	case float32:
		return float64(v), nil
	}
	c, err := fromReflect(reflect.ValueOf(v), 0)
	if err != nil {
		return nil, fmt.Errorf("converting %T to blobmsg: %w", v, err)
	}
	return c, nil
}

func fromInt64(i int64) any {
	if i >= math.MinInt32 && i <= math.MaxInt32 {
		return int32(i)
	}
	return i
}

// ToTable converts a Go value to a Table; nil gives an empty table, the
// message `ubus call` sends without arguments.
func ToTable(v any) (Table, error) {
	if v == nil {
		return Table{}, nil
	}
	c, err := FromGo(v)
	if err != nil {
		return nil, err
	}
	switch c := c.(type) {
	case Table:
		return c, nil
	case nil:
		return Table{}, nil
	}
	return nil, fmt.Errorf("ubus message must be a JSON object, got %T", v)
}
