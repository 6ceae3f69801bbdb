package ubus

import (
	"encoding/json"
	"math"
	"net/netip"
	"reflect"
	"testing"
	"time"
)

type innerInfo struct {
	Soc  string `json:"soc"`
	Note string `json:"note,omitempty"`
}

type embeddedPtr struct {
	Extra int `json:"extra"`
}

type sample struct {
	innerInfo
	*embeddedPtr
	Name     string            `json:"name"`
	Skip     string            `json:"-"`
	unexp    int               //nolint:unused // not exported: never sent
	NoTag    int               // the Go name becomes the key
	Big      uint64            `json:"big"`
	Neg      int64             `json:"neg"`
	Whole    float64           `json:"whole"`
	Frac     float64           `json:"frac"`
	Huge     float64           `json:"huge"`
	When     time.Time         `json:"when"`
	Wait     time.Duration     `json:"wait"`
	Addr     netip.Addr        `json:"addr"`
	Counts   map[string]int    `json:"counts"`
	Raw      []byte            `json:"raw"`
	NilList  []string          `json:"nil_list"`
	Empty    []string          `json:"empty,omitempty"`
	Ptr      *innerInfo        `json:"ptr"`
	NilPtr   *innerInfo        `json:"nil_ptr"`
	Any      any               `json:"any"`
	Nested   []map[string]bool `json:"nested"`
	Msg      json.RawMessage   `json:"msg"`
	Data     Table             `json:"data"`
	ByNumber map[int]string    `json:"by_number"`
}

// The reflection walk gives exactly what a trip through encoding/json and
// ParseJSON gives, for every kind of field fastpath's types use.
func TestFromGoMatchesJSONRoundTrip(t *testing.T) {
	values := []any{
		sample{
			innerInfo: innerInfo{Soc: "mt7621"}, embeddedPtr: &embeddedPtr{Extra: 3},
			Name: "x", Skip: "no", unexp: 1, NoTag: 7, Big: math.MaxUint64, Neg: -5000000000,
			Whole: 3, Frac: 3.25, Huge: 1e22, When: time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC),
			Wait: 1500 * time.Millisecond, Addr: netip.MustParseAddr("2001:db8::1"),
			Counts: map[string]int{"b": 2, "a": 1}, Raw: []byte{1, 2, 3}, Empty: nil,
			Ptr: &innerInfo{Soc: "p", Note: "n"}, Any: map[string]any{"k": []any{1.0, "v"}},
			Nested: []map[string]bool{{"t": true}}, Msg: json.RawMessage(`{"z":1,"a":2}`),
			Data: Table{{"q", int32(1)}}, ByNumber: map[int]string{2: "two", 10: "ten"},
		},
		sample{},
		[]int{1, 2},
		map[string]any{"x": nil},
		struct{ A *int }{},
	}
	for i, v := range values {
		fast, err := FromGo(v)
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := ParseJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, slow) {
			fj, _ := json.Marshal(fast)
			t.Errorf("value %d:\nreflect %s\njson    %s\n%#v\n%#v", i, fj, b, fast, slow)
		}
	}
	if _, err := FromGo(struct{ F float64 }{math.NaN()}); err == nil {
		t.Error("NaN converted without error")
	}
}
