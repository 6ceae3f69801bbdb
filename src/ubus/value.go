package ubus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// FromGo converts a Go value to the blobmsg value model the way libubox's
// blobmsg_add_json does after encoding/json: objects keep their key order
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
	case json.RawMessage:
		return ParseJSON(v)
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

// ParseJSON parses JSON text into the blobmsg value model, keeping the key
// order of objects.
func ParseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseJSONValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("JSON: unexpected data after the top-level value")
	}
	return v, nil
}

func parseJSONValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxBlobNesting {
		return nil, fmt.Errorf("JSON nested deeper than %d levels", maxBlobNesting)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("JSON: %w", err)
	}
	switch tok := tok.(type) {
	case json.Delim:
		switch tok {
		case '{':
			t := Table{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("JSON: %w", err)
				}
				v, err := parseJSONValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				t = append(t, Field{Name: k.(string), Value: v})
			}
			_, err := dec.Token() // '}'
			return t, err
		case '[':
			a := Array{}
			for dec.More() {
				v, err := parseJSONValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token() // ']'
			return a, err
		}
		return nil, fmt.Errorf("JSON: unexpected %v", tok)
	case json.Number:
		if i, err := strconv.ParseInt(string(tok), 10, 64); err == nil {
			return fromInt64(i), nil
		}
		f, err := strconv.ParseFloat(string(tok), 64)
		if err != nil {
			return nil, fmt.Errorf("JSON number %s: %w", tok, err)
		}
		return f, nil
	case string, bool, nil:
		return tok, nil
	}
	return nil, fmt.Errorf("JSON: unexpected token %v", tok)
}

// MarshalJSON prints the table as a JSON object in wire order, as
// `ubus call` does.
func (t Table) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range t {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Name)
		b.Write(k)
		b.WriteByte(':')
		if err := writeJSONValue(&b, f.Value); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MarshalJSON prints the array as a JSON array.
func (a Array) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeJSONValue(&b, v); err != nil {
			return nil, err
		}
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

func writeJSONValue(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case float64:
		// JSON has no NaN or infinity; libubox would print "nan", which no
		// JSON parser accepts, so null is the honest answer.
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b.WriteString("null")
			return nil
		}
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0" // stays a double when parsed again, as libubox's "%f" does
		}
		b.WriteString(s)
		return nil
	}
	j, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(j)
	return nil
}
