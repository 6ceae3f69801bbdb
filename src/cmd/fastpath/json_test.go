package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/report"
	"github.com/fastpath-wrt/fastpath/src/status"
	"github.com/fastpath-wrt/fastpath/src/ubus"
)

// fill sets every field the JSON form carries to a value of its own:
// strings with characters that need escaping, numbers near their type's
// top, two elements in each list and map.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 12, 1, 13, 0, *n, 123456789, time.UTC)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				fill(v.Field(i), n)
			}
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d \"/\\ <&> é\t", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(1)<<(v.Type().Bits()-2) + int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(1)<<(v.Type().Bits()-2) + uint64(*n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) + 0.25)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fill(s.Index(0), n)
		fill(s.Index(1), n)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := 0; i < 2; i++ {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, n)
			fill(e, n)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	}
}

func filled[T any](t *testing.T) T {
	var v T
	n := 0
	fill(reflect.ValueOf(&v).Elem(), &n)
	return v
}

// roundTrip sends v the way the daemon answers and the CLI reads: model,
// blobmsg bytes, model, typed value.
func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	tab, err := ubus.ToTable(v)
	if err != nil {
		t.Fatal(err)
	}
	wire, err := ubus.EncodeTable(tab)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ubus.DecodeTable(wire)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := ubus.Decode(back, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkReport: a fully populated answer comes back equal through ubus,
// as it does through encoding/json, and prints as encoding/json printed it
// before (same keys, order and layout; only the escapes the writer
// documents differ).
func checkReport[T any](t *testing.T, text func(T) string) {
	v := filled[T](t)
	got := roundTrip(t, v)
	if !reflect.DeepEqual(got, v) {
		t.Errorf("%T changed through ubus:\n%+v\n%+v", v, got, v)
	}
	var viaJSON T
	b, _ := json.Marshal(v)
	if err := json.Unmarshal(b, &viaJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(viaJSON, got) {
		t.Errorf("%T: encoding/json gives\n%+v\nDecode gives\n%+v", v, viaJSON, got)
	}
	if text != nil && text(got) != text(v) {
		t.Errorf("%T prints differently after the round trip", v)
	}
	undoEscapes := strings.NewReplacer(`\/`, `/`)
	undoHTML := strings.NewReplacer(`\u003c`, `<`, `\u003e`, `>`, `\u0026`, `&`)
	tab, _ := ubus.ToTable(v)
	compact, err := ubus.AppendJSON(nil, tab)
	if err != nil {
		t.Fatal(err)
	}
	if undoEscapes.Replace(string(compact)) != undoHTML.Replace(string(b)) {
		t.Errorf("%T --json\n%s\nencoding/json printed\n%s", v, compact, b)
	}
	indented, err := ubus.AppendJSONIndent(nil, v, "  ")
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if undoEscapes.Replace(string(indented))+"\n" != undoHTML.Replace(want.String()) {
		t.Errorf("%T indented\n%s\nencoding/json printed\n%s", v, indented, want.String())
	}
}

func TestReportsThroughUbus(t *testing.T) {
	checkReport(t, report.StatusText)
	checkReport(t, func(a flowsAnswer) string { return report.FlowsText(a.Flows) })
	checkReport(t, func(a cutsAnswer) string { return report.CutsText(a.Cuts) })
	checkReport(t, report.CutSummaryText)
	checkReport[struct{ Released int }](t, nil)
	checkReport[report.Printout](t, nil)
}

// Answers the CLI cannot read say which field is wrong.
func TestShowNamesTheBadField(t *testing.T) {
	field := func(name string, v any) ubus.Field { return ubus.Field{Name: name, Value: v} }
	answer := ubus.Table{field("flows", ubus.Array{ubus.Table{field("id", "one")}}), field("total", int32(1))}
	var a flowsAnswer
	err := ubus.Decode(answer, &a)
	if err == nil || err.Error() != "field flows[0].id: cannot decode a string into uint32" {
		t.Errorf("got %v", err)
	}
	var st status.Status
	bad := ubus.Table{field("cut", ubus.Table{field("cuts", ubus.Array{ubus.Table{field("since", int32(1))}})})}
	if err := ubus.Decode(bad, &st); err == nil ||
		err.Error() != "field cut.cuts[0].since: Time.UnmarshalJSON: input is not a JSON string" {
		t.Errorf("got %v", err)
	}
}

// A flows answer of 10,000 entries, as the CLI reads and prints it, beside
// what encoding/json took for the same.
func BenchmarkFlowsAnswer(b *testing.B) {
	var a flowsAnswer
	for i := 0; i < 10000; i++ {
		var f netstate.Flow
		n := i
		fill(reflect.ValueOf(&f).Elem(), &n)
		a.Flows = append(a.Flows, f)
	}
	a.Total = len(a.Flows)
	tab, err := ubus.ToTable(a)
	if err != nil {
		b.Fatal(err)
	}
	text, _ := json.Marshal(a)
	b.Run("Decode", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var out flowsAnswer
			if err := ubus.Decode(tab, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var out flowsAnswer
			if err := json.Unmarshal(text, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := ubus.AppendJSON(nil, tab); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := json.Marshal(a); err != nil {
				b.Fatal(err)
			}
		}
	})
}
