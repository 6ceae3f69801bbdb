package ubus

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// Go values convert as blobmsg_add_json would, byte for byte with what
// the ubus CLI sent for `ubus call demo hello '{"name":"world","count":7,"flag":true}'`.
func TestFromGoMatchesCLIEncoding(t *testing.T) {
	args := struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
		Flag  bool   `json:"flag"`
	}{"world", 7, true}
	tab, err := ToTable(args)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := EncodeTable(tab)
	// the recorded DATA payload, without the DATA attribute header
	want := mustHex("8300001200046e616d650000776f726c64000000850000100005636f756e7400000000078700000d0004666c6167000001000000")
	if !bytes.Equal(got, want) {
		t.Errorf("encoded\n%x\nwant\n%x", got, want)
	}
}

func TestNumberWidths(t *testing.T) {
	cases := []struct {
		json string
		want any
	}{
		{`2147483647`, int32(math.MaxInt32)},
		{`-2147483648`, int32(math.MinInt32)},
		{`2147483648`, int64(2147483648)},
		{`5000000000`, int64(5000000000)},
		{`3.25`, 3.25},
		{`1e3`, 1000.0},
		{`null`, nil},
		{`true`, true},
	}
	for _, tc := range cases {
		v, err := ParseJSON([]byte(tc.json))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(v, tc.want) {
			t.Errorf("%s -> %#v, want %#v", tc.json, v, tc.want)
		}
	}
}

func TestNullIsUnspec(t *testing.T) {
	tab, err := ToTable(json.RawMessage(`{"a":null}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := EncodeTable(tab)
	// extended bit, type 0 (UNSPEC), length 8: header, name "a", no data
	if want := mustHex("80000008 0001 6100"); !bytes.Equal(b, want) {
		t.Errorf("null encodes as %x, want %x", b, want)
	}
	back, err := DecodeTable(b)
	if err != nil || len(back) != 1 || back[0].Value != nil {
		t.Errorf("decoded %#v, %v", back, err)
	}
	j, _ := json.Marshal(back)
	if string(j) != `{"a":null}` {
		t.Errorf("prints %s", j)
	}
}

func TestAllTypesRoundTrip(t *testing.T) {
	in := Table{
		{"s", "text"}, {"b", false}, {"i16", int16(-2)}, {"i32", int32(-3)}, {"i64", int64(-4)},
		{"d", -1.5}, {"n", nil}, {"t", Table{{"x", "y"}}}, {"a", Array{int32(1), "two", Array{}}},
		{"", "empty name"},
	}
	b, err := EncodeTable(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(b)%4 != 0 {
		t.Errorf("encoding of %d bytes is not padded to 4", len(b))
	}
	out, err := DecodeTable(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip\n%#v\n%#v", in, out)
	}
	j, _ := json.Marshal(out)
	want := `{"s":"text","b":false,"i16":-2,"i32":-3,"i64":-4,"d":-1.5,"n":null,"t":{"x":"y"},"a":[1,"two",[]],"":"empty name"}`
	if string(j) != want {
		t.Errorf("JSON %s\nwant %s", j, want)
	}
}

func TestMalformedInputIsRejected(t *testing.T) {
	bad := map[string]string{
		"length beyond data":       "8300002000046e616d650000",
		"length below header":      "83000002",
		"string without NUL":       "8300000b0001610061626300",
		"int32 of 3 bytes":         "8500000b0001610000000001",
		"not blobmsg (no ext bit)": "0300000c0001610061626300",
		"unknown type":             "8900000c0001610000000000",
		"name longer than attr":    "830000080009",
	}
	for name, h := range bad {
		if _, err := DecodeTable(mustHex(h)); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
	msgs := map[string]string{
		"short":                 "0001",
		"two top-level attrs":   "000100010000000000000004 00000004",
		"trailing bytes":        "00010001000000000000000400000000",
		"extended ubus attr":    "00010001000000000000000c8100000800000000",
		"attr overruns message": "00010001000000000000000c0100000c00000000",
		"top attr id not zero":  "000100010000000001000004",
	}
	for name, h := range msgs {
		if _, err := DecodeMessage(mustHex(h)); err == nil {
			t.Errorf("message %s: decoded without error", name)
		}
	}
}

func TestDeepNestingIsRefused(t *testing.T) {
	v := any("leaf")
	for i := 0; i < maxBlobNesting+5; i++ {
		v = Table{{"n", v}}
	}
	if _, err := EncodeTable(v.(Table)); err == nil {
		t.Error("encoded a table nested deeper than the limit")
	}
	deep := strings.Repeat(`{"n":`, maxBlobNesting+5) + "1" + strings.Repeat("}", maxBlobNesting+5)
	if _, err := ParseJSON([]byte(deep)); err == nil {
		t.Error("parsed JSON nested deeper than the limit")
	}
}
