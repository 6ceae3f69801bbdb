package ubus

import (
	"bytes"
	"reflect"
	"testing"
)

func addVectorSeeds(f *testing.F, payloads bool) {
	scenarios, err := loadVectorsErr()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range scenarios {
		for _, vm := range s.Messages {
			if !payloads {
				f.Add(vm.Bytes)
				continue
			}
			m, err := DecodeMessage(vm.Bytes)
			if err != nil {
				f.Fatal(err)
			}
			for _, id := range []AttrID{AttrData, AttrSignature} {
				if d, ok := m.Get(id); ok {
					f.Add(d)
				}
			}
		}
	}
}

// FuzzDecodeMessage: any bytes either fail to decode or decode into a
// message whose encoding decodes to the same message again.
func FuzzDecodeMessage(f *testing.F) {
	addVectorSeeds(f, false)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMessage(b)
		if err != nil {
			return
		}
		out, err := m.Encode()
		if err != nil {
			return // over the size limit
		}
		m2, err := DecodeMessage(out)
		if err != nil {
			t.Fatalf("re-encoded message does not decode: %v\n%x", err, out)
		}
		out2, _ := m2.Encode()
		if !bytes.Equal(out, out2) {
			t.Fatalf("encoding not stable:\n%x\n%x", out, out2)
		}
		_, _ = ReadMessage(bytes.NewReader(b))
		for _, id := range []AttrID{AttrData, AttrSignature} {
			m.Table(id)
		}
		m.Subscribers()
		DecodeMonitor(m)
	})
}

// FuzzParseJSON: JSON text that parses prints back as JSON that parses to
// the same values, and encodes as blobmsg when it is an object.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"name":"world","count":7,"flag":true}`, `{"a":[1,"two",{"three":3}],"b":null,"c":3.25,"d":5000000000}`,
		`[]`, `"x"`, `{"":{"":[]}}`, `-0`, `1e400`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseJSON(b)
		if err != nil {
			return
		}
		j, err := Table{{"v", v}}.MarshalJSON()
		if err != nil {
			t.Fatalf("parsed value does not print: %v", err)
		}
		back, err := ParseJSON(j)
		if err != nil {
			t.Fatalf("printed JSON %s does not parse: %v", j, err)
		}
		if !reflect.DeepEqual(normNaN(Table{{"v", v}}), normNaN(back)) {
			t.Fatalf("values changed through JSON:\n%#v\n%#v", v, back)
		}
		if tab, ok := v.(Table); ok {
			if _, err := EncodeTable(tab); err != nil {
				t.Fatalf("object does not encode: %v", err)
			}
		}
	})
}

// FuzzBlobmsg: decoded tables re-encode to bytes that decode to the same
// values.
func FuzzBlobmsg(f *testing.F) {
	addVectorSeeds(f, true)
	f.Fuzz(func(t *testing.T, b []byte) {
		tab, err := DecodeTable(b)
		if err != nil {
			return
		}
		out, err := EncodeTable(tab)
		if err != nil {
			t.Fatalf("decoded table does not encode: %v", err)
		}
		back, err := DecodeTable(out)
		if err != nil {
			t.Fatalf("re-encoded table does not decode: %v\n%x", err, out)
		}
		if !reflect.DeepEqual(normNaN(tab), normNaN(back)) {
			t.Fatalf("values changed:\n%#v\n%#v", tab, back)
		}
		if _, err := tab.MarshalJSON(); err != nil {
			t.Fatalf("decoded table does not print as JSON: %v", err)
		}
	})
}

// normNaN makes NaN comparable (NaN != NaN).
func normNaN(v any) any {
	switch v := v.(type) {
	case Table:
		out := make(Table, len(v))
		for i, f := range v {
			out[i] = Field{f.Name, normNaN(f.Value)}
		}
		return out
	case Array:
		out := make(Array, len(v))
		for i, e := range v {
			out[i] = normNaN(e)
		}
		return out
	case float64:
		if v != v {
			return "NaN"
		}
	}
	return v
}
