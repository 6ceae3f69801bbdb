package ubus

import (
	"encoding/json"
	"math"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Decode(FromGo(v)) gives what json.Unmarshal(json.Marshal(v)) gives, for
// every kind of field fastpath's types use.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	full := sample{
		innerInfo: innerInfo{Soc: "mt7621", Note: "n"}, embeddedPtr: &embeddedPtr{Extra: 3},
		Name: "x", NoTag: 7, Big: math.MaxUint64, Neg: -5000000000,
		Whole: 3, Frac: 3.25, Huge: 1e22, When: time.Date(2026, 11, 30, 5, 0, 0, 123456789, time.UTC),
		Wait: 1500 * time.Millisecond, Addr: netip.MustParseAddr("2001:db8::1"),
		Counts: map[string]int{"b": 2, "a": 1}, Raw: []byte{1, 2, 3}, NilList: []string{"l"}, Empty: []string{"e"},
		Ptr: &innerInfo{Soc: "p", Note: "n"}, Nested: []map[string]bool{{"t": true}, nil},
		Msg: json.RawMessage(`{"z":1,"a":[2]}`), Data: Table{{"q", int32(1)}}, ByNumber: map[int]string{2: "two", 10: "ten"},
	}
	for i, v := range []sample{full, {}} {
		// an unexported embedded pointer cannot be allocated, by either
		fromModel := sample{Skip: "kept", unexp: 9, embeddedPtr: &embeddedPtr{}}
		m, err := FromGo(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := Decode(m, &fromModel); err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		fromJSON := sample{Skip: "kept", unexp: 9, embeddedPtr: &embeddedPtr{}}
		// Table has no UnmarshalJSON: a shallower field takes "data" from
		// encoding/json.
		wrap := struct {
			*sample
			Data json.RawMessage `json:"data"`
		}{sample: &fromJSON}
		b, _ := json.Marshal(v)
		if err := json.Unmarshal(b, &wrap); err != nil {
			t.Fatal(err)
		}
		if len(fromModel.Data) != len(v.Data) || !reflect.DeepEqual(fromModel.Data, v.Data) && len(v.Data) > 0 {
			t.Errorf("value %d: Table %#v, want %#v", i, fromModel.Data, v.Data)
		}
		fromJSON.Data = fromModel.Data
		if !reflect.DeepEqual(fromModel, fromJSON) {
			t.Errorf("value %d:\nDecode %+v\njson   %+v", i, fromModel, fromJSON)
		}
		if i == 0 && !reflect.DeepEqual(fromModel, sample{
			innerInfo: full.innerInfo, embeddedPtr: full.embeddedPtr, Name: full.Name, Skip: "kept", unexp: 9, NoTag: 7,
			Big: full.Big, Neg: full.Neg, Whole: 3, Frac: 3.25, Huge: 1e22, When: full.When, Wait: full.Wait, Addr: full.Addr,
			Counts: full.Counts, Raw: full.Raw, NilList: full.NilList, Empty: full.Empty, Ptr: full.Ptr, Nested: full.Nested,
			Msg: full.Msg, Data: full.Data, ByNumber: full.ByNumber,
		}) {
			t.Errorf("round trip lost something:\n%+v", fromModel)
		}
	}
}

func TestDecodeRules(t *testing.T) {
	type Inner struct {
		A int `json:"a"`
	}
	type target struct {
		*Inner
		Name   string            `json:"name,omitempty"`
		Count  uint16            `json:"count"`
		Ratio  float32           `json:"ratio"`
		On     bool              `json:"on"`
		List   []int             `json:"list"`
		Fixed  [2]string         `json:"fixed"`
		Ptr    *int              `json:"ptr"`
		Map    map[string]*Inner `json:"map"`
		Any    any               `json:"any"`
		Keep   string            `json:"keep"`
		Prefix netip.Prefix      `json:"prefix"`
	}
	var got target
	got.Keep = "untouched by null"
	got.List = []int{9, 9, 9}
	in := Table{
		{"a", int32(5)}, {"NAME", "case-insensitive"}, {"count", 65535.0}, {"ratio", int32(2)}, {"on", true},
		{"list", Array{int32(1), int64(2)}}, {"fixed", Array{"x"}}, {"ptr", int16(7)},
		{"map", Table{{"k", Table{{"a", int32(1)}}}, {"nil", nil}}}, {"any", Table{{"x", Array{}}}},
		{"keep", nil}, {"prefix", "10.0.0.0/8"}, {"unknown", Table{{"ignored", true}}},
	}
	if err := Decode(in, &got); err != nil {
		t.Fatal(err)
	}
	seven := 7
	want := target{
		Inner: &Inner{A: 5}, Name: "case-insensitive", Count: 65535, Ratio: 2, On: true, List: []int{1, 2},
		Fixed: [2]string{"x", ""}, Ptr: &seven, Map: map[string]*Inner{"k": {A: 1}, "nil": nil},
		Any: Table{{"x", Array{}}}, Keep: "untouched by null", Prefix: netip.MustParsePrefix("10.0.0.0/8"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", got, want)
	}
	if err := Decode(Table{{"ptr", nil}, {"list", nil}, {"map", nil}, {"any", nil}}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Ptr != nil || got.List != nil || got.Map != nil || got.Any != nil {
		t.Errorf("null did not clear pointer, slice, map and interface: %+v", got)
	}
}

func TestDecodeErrorsNameTheField(t *testing.T) {
	type leaf struct {
		Port uint16 `json:"port"`
	}
	type mid struct {
		Leaves []leaf          `json:"leaves"`
		ByName map[string]leaf `json:"by_name"`
	}
	type top struct {
		Mid  mid            `json:"mid"`
		When time.Time      `json:"when"`
		Raw  []byte         `json:"raw"`
		Keys map[int]string `json:"keys"`
		Num  int8           `json:"num"`
	}
	leaves := func(port any) Table {
		return Table{{"mid", Table{{"leaves", Array{Table{{"port", int32(1)}}, Table{{"port", port}}}}}}}
	}
	cases := []struct {
		in   any
		want string
	}{
		{leaves("80"), "field mid.leaves[1].port: cannot decode a string into uint16"},
		{leaves(int32(-1)), "field mid.leaves[1].port: -1 does not fit uint16"},
		{leaves(int32(70000)), "field mid.leaves[1].port: 70000 does not fit uint16"},
		{leaves(1.5), "field mid.leaves[1].port: cannot decode the number 1.5 into uint16"},
		{Table{{"mid", Table{{"by_name", Table{{"web", Table{{"port", true}}}}}}}}, `field mid.by_name["web"].port: cannot decode a boolean into uint16`},
		{Table{{"mid", Array{}}}, "field mid: cannot decode an array into ubus.mid"},
		{Table{{"when", "yesterday"}}, `field when: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
		{Table{{"raw", "!!"}}, "field raw: not base64: illegal base64 data at input byte 0"},
		{Table{{"keys", Table{{"x", "y"}}}}, `field keys["x"]: key "x" is not a int`},
		{Table{{"num", int32(200)}}, "field num: 200 does not fit int8"},
		{Array{}, "cannot decode an array into ubus.top"},
	}
	for _, tc := range cases {
		var v top
		err := Decode(tc.in, &v)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v:\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
	var v top
	if err := Decode(Table{}, v); err == nil || !strings.Contains(err.Error(), "non-nil pointer") {
		t.Errorf("decoding into a non-pointer: %v", err)
	}
}

// An unexported embedded pointer cannot be allocated: an error, as
// encoding/json gives, not a panic.
func TestDecodeUnexportedEmbeddedPointer(t *testing.T) {
	var s sample
	err := Decode(Table{{"extra", int32(1)}}, &s)
	if err == nil || !strings.Contains(err.Error(), "field extra: cannot set the embedded pointer to unexported struct ubus.embeddedPtr") {
		t.Errorf("got %v", err)
	}
	s.embeddedPtr = &embeddedPtr{}
	if err := Decode(Table{{"extra", int32(1)}}, &s); err != nil || s.Extra != 1 {
		t.Errorf("allocated embedded pointer: %v, %d", err, s.Extra)
	}
}

func TestRequestDecode(t *testing.T) {
	var a struct {
		Mode  string `json:"mode"`
		Limit int    `json:"limit"`
	}
	r := &Request{Args: Table{{"mode", "software"}, {"limit", int32(5)}}}
	if err := r.Decode(&a); err != nil || a.Mode != "software" || a.Limit != 5 {
		t.Errorf("%+v, %v", a, err)
	}
}
