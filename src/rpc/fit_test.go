package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/ubus"
)

// routerScale is a busy router's cut state: 2,500 active cuts (IPv6, as
// banIP's lists make them) and a block list of 10,000 malformed lines.
// Before answers were fitted, status, cuts and cut each took over 1 MiB.
func routerScale() (cut.Summary, []cut.Cut) {
	var cuts []cut.Cut
	for i := 0; i < 2500; i++ {
		o := cut.Tuple{Proto: "tcp", Src: fmt.Sprintf("2001:db8:1:2:3:4:5:%x", i), Dst: fmt.Sprintf("2001:db8:ffff:eeee:dddd:cccc:bbbb:%x", i),
			SrcPort: uint16(40000 + i), DstPort: 443}
		cuts = append(cuts, cut.Cut{Original: o, Reply: o.Reverse(), Reason: "listed in banip-drop (country and DROP lists)",
			Trigger: "blocklist:banip-drop", Since: time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC), Expires: 9.5, Frames: 1200, Bytes: 1 << 20, InFastpath: true})
	}
	var problems []string
	for i := 1; i <= 10000; i++ {
		problems = append(problems, fmt.Sprintf("/etc/fastpath/blocklist.txt:%d: %q is not an IP address or CIDR: skipped", i, fmt.Sprintf("not-an-address-%d", i)))
	}
	s := cut.Summary{Enabled: true, InFastpath: true, Reason: "netdev ingress available", Devices: []string{"eth0", "eth1"},
		Active: len(cuts), Cuts: cuts, Blocklists: []cut.Blocklist{
			{Name: "banip-drop", Kind: "nftset", Source: "inet banip drop", Entries: 50000},
			{Name: "local", Kind: "file", Source: "/etc/fastpath/blocklist.txt", Entries: 3, Errors: problems},
		}}
	return s, cuts
}

// answer calls a method's handler as ubus would and returns its answer
// and the answer's blobmsg size.
func answer(t *testing.T, o *Object, method, args string) (ubus.Table, int) {
	t.Helper()
	var a ubus.Table
	if args != "" {
		v, err := ubus.ParseJSON([]byte(args))
		if err != nil {
			t.Fatal(err)
		}
		a = v.(ubus.Table)
	}
	for _, m := range o.UbusObject().Methods {
		if m.Name != method {
			continue
		}
		data, st := m.Handler(context.Background(), &ubus.Request{Args: a})
		tab, err := ubus.ToTable(data)
		if err != nil {
			t.Fatal(err)
		}
		if st != ubus.StatusOK {
			t.Fatalf("%s %s: status %d: %v", method, args, st, tab)
		}
		b, err := ubus.EncodeTable(tab)
		if err != nil {
			t.Fatal(err)
		}
		return tab, len(b)
	}
	t.Fatalf("no method %s", method)
	return nil, 0
}

// get walks an answer by field names and list indexes ("cut", "cuts", 0).
func get(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			tab, ok := v.(ubus.Table)
			if !ok {
				t.Fatalf("%v: not a table at %q", path, k)
			}
			if v, ok = tab.Get(k); !ok {
				t.Fatalf("%v: no field %q", path, k)
			}
		case int:
			a, ok := v.(ubus.Array)
			if !ok || k >= len(a) {
				t.Fatalf("%v: no item %d", path, k)
			}
			v = a[k]
		}
	}
	return v
}

func length(t *testing.T, v any) int {
	t.Helper()
	a, ok := v.(ubus.Array)
	if !ok {
		t.Fatalf("%v is not a list", v)
	}
	return len(a)
}

func TestAnswersFitAtRouterScale(t *testing.T) {
	h := start(t)
	h.fake.summary, h.fake.cutsMade = routerScale()
	const limit = ubus.MaxMessageLen
	cases := []struct {
		method, args string
		check        func(t *testing.T, a ubus.Table)
	}{
		{"status", "", func(t *testing.T, a ubus.Table) {
			if n := length(t, get(t, a, "cut", "cuts")); n != listItems || get(t, a, "cut", "cuts_total") != int32(2500) {
				t.Errorf("status has %d cuts of %v, want the first %d of 2500", n, get(t, a, "cut", "cuts_total"), listItems)
			}
			if n := length(t, get(t, a, "cut", "blocklists", 1, "errors")); n != listItems || get(t, a, "cut", "blocklists", 1, "errors_total") != int32(10000) {
				t.Errorf("status has %d problems of %v, want the first %d of 10000", n, get(t, a, "cut", "blocklists", 1, "errors_total"), listItems)
			}
			if get(t, a, "cut", "active") != int32(2500) {
				t.Errorf("active %v, want the count of every cut", get(t, a, "cut", "active"))
			}
		}},
		{"cuts", "", func(t *testing.T, a ubus.Table) {
			if n := length(t, get(t, a, "cuts")); n != DefaultCutLimit || get(t, a, "cuts_total") != int32(2500) {
				t.Errorf("%d cuts of %v, want a first page of %d of 2500", n, get(t, a, "cuts_total"), DefaultCutLimit)
			}
			if get(t, a, "blocklists", 1, "errors_total") != int32(10000) {
				t.Errorf("errors_total %v, want 10000", get(t, a, "blocklists", 1, "errors_total"))
			}
		}},
		{"cuts", `{"offset":2400,"limit":500}`, func(t *testing.T, a ubus.Table) {
			if n := length(t, get(t, a, "cuts")); n != 100 || get(t, a, "cuts_total") != int32(2500) {
				t.Errorf("%d cuts of %v, want the last 100 of 2500", n, get(t, a, "cuts_total"))
			}
			if src := get(t, a, "cuts", 0, "original", "src"); src != "2001:db8:1:2:3:4:5:960" {
				t.Errorf("the page starts at %v, want cut 2400 (2001:db8:1:2:3:4:5:960)", src)
			}
		}},
		{"cuts", `{"offset":2147483647,"limit":10000}`, func(t *testing.T, a ubus.Table) {
			if n := length(t, get(t, a, "cuts")); n != 0 || get(t, a, "cuts_total") != int32(2500) {
				t.Errorf("%d cuts of %v past the end, want none of 2500", n, get(t, a, "cuts_total"))
			}
		}},
		{"cuts", `{"limit":10000}`, func(t *testing.T, a ubus.Table) {
			n := length(t, get(t, a, "cuts"))
			if n == 0 || n >= 2500 || get(t, a, "cuts_total") != int32(2500) || get(t, a, "truncated") != true {
				t.Errorf("%d cuts of %v, truncated %v: want as many as fit, flagged", n, get(t, a, "cuts_total"), get(t, a, "truncated"))
			}
		}},
		{"cut", `{"address":"2001:db8::/32"}`, func(t *testing.T, a ubus.Table) {
			if n := length(t, get(t, a, "cuts")); n != listItems || get(t, a, "cuts_total") != int32(2500) || get(t, a, "count") != int32(2500) {
				t.Errorf("%d cuts of %v (count %v), want the first %d of 2500", n, get(t, a, "cuts_total"), get(t, a, "count"), listItems)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.method+tc.args, func(t *testing.T) {
			a, size := answer(t, h.obj, tc.method, tc.args)
			if size >= limit {
				t.Fatalf("answer of %d bytes, ubusd takes at most %d", size, limit)
			}
			t.Logf("%d bytes", size)
			if get(t, a, "truncated") != true {
				t.Errorf("truncated %v, want true", get(t, a, "truncated"))
			}
			tc.check(t, a)
			// ubusd (the broker) passes it: the caller gets the answer.
			if got, err := h.call(t, tc.method, tc.args); err != nil {
				t.Fatalf("through ubus: %v (%.200s)", err, got)
			}
		})
	}
}

// An answer that fits is sent as the method made it: no field added.
func TestSmallAnswersAreUntouched(t *testing.T) {
	h := start(t)
	a, _ := answer(t, h.obj, "status", "")
	if _, ok := a.Get("truncated"); ok {
		t.Errorf("a small status has a truncated field: %v", a)
	}
	j, _ := json.Marshal(a)
	if strings.Contains(string(j), "_total") {
		t.Errorf("a small status has a _total field: %s", j)
	}
}

func TestLongTextsAreCut(t *testing.T) {
	long := strings.Repeat("é", ubus.MaxMessageLen) // 2 MiB of 2-byte runes
	got, err := fit(ubus.Table{{Name: "error", Value: "read /x: " + long}}, "")
	if err != nil {
		t.Fatal(err)
	}
	s := get(t, got, "error").(string)
	if len(s) > maxText || !utf8.ValidString(s) || !strings.HasSuffix(s, "…") || !strings.HasPrefix(s, "read /x: éé") {
		t.Errorf("text of %d bytes (valid UTF-8 %v), want at most %d ending in …", len(s), utf8.ValidString(s), maxText)
	}
	if get(t, got, "truncated") != true {
		t.Error("a cut text does not flag the answer truncated")
	}
}

// Lists nested in lists are shortened where they weigh: the errors of a
// block list, not the block lists.
func TestTheHeaviestListIsShortened(t *testing.T) {
	var lists ubus.Array
	for i := 0; i < 5; i++ {
		var errs ubus.Array
		for j := 0; j < 3000*i; j++ {
			errs = append(errs, strings.Repeat("x", 80))
		}
		lists = append(lists, ubus.Table{{Name: "name", Value: fmt.Sprint(i)}, {Name: "errors", Value: errs}})
	}
	out, err := fitBytes(ubus.Table{{Name: "blocklists", Value: lists}}) // the byte budget alone, no item cap
	if err != nil {
		t.Fatal(err)
	}
	if n := tableSize(out); n > answerBudget {
		t.Fatalf("%d bytes, over %d", n, answerBudget)
	}
	if n := length(t, get(t, out, "blocklists")); n != 5 {
		t.Errorf("%d block lists kept, want all 5", n)
	}
	if get(t, out, "blocklists", 4, "errors_total") != int32(12000) {
		t.Errorf("the heaviest list has no errors_total 12000: %v", get(t, out, "blocklists", 4))
	}
	if n := length(t, get(t, out, "blocklists", 1, "errors")); n != 3000 {
		t.Errorf("a light list lost items: %d of 3000", n)
	}
}

// attrSize must be what ubus writes, or answers could pass the budget.
func TestAttrSizeIsTheEncodedSize(t *testing.T) {
	v := ubus.Table{
		{Name: "a", Value: "abc"}, {Name: "bb", Value: true}, {Name: "ccc", Value: int32(7)}, {Name: "dddd", Value: int64(1 << 40)},
		{Name: "e", Value: 1.5}, {Name: "f", Value: nil}, {Name: "g", Value: int16(3)},
		{Name: "list", Value: ubus.Array{"x", int32(1), ubus.Table{{Name: "n", Value: ""}}, ubus.Array{}}},
		{Name: "t", Value: ubus.Table{{Name: "deep", Value: ubus.Array{ubus.Table{}}}}},
	}
	b, err := ubus.EncodeTable(v)
	if err != nil {
		t.Fatal(err)
	}
	if n := tableSize(v); n != len(b) {
		t.Errorf("tableSize %d, EncodeTable wrote %d bytes", n, len(b))
	}
}

func TestPageArgumentsAreChecked(t *testing.T) {
	h := start(t)
	for args, want := range map[string]string{
		`{"offset":-1}`:   "offset: -1 is out of range — use 0 (the first item) or more",
		`{"limit":0}`:     "limit: 0 is out of range — use 1 to 10000 (default 500)",
		`{"limit":10001}`: "limit: 10001 is out of range",
		`{"limit":"all"}`: "limit: must be an integer",
	} {
		got, err := h.call(t, "cuts", args)
		var se *ubus.StatusError
		if err == nil || !errors.As(err, &se) || se.Code != ubus.StatusInvalidArgument || !strings.HasPrefix(se.Message, want) {
			t.Errorf("cuts %s: %v (%s), want INVALID_ARGUMENT %q", args, err, got, want)
		}
	}
}

// With the cut sets full, the engine cuts what fits in the fast path and
// only deletes the conntrack entries of the rest, which live connections
// survive. The answer used to be a plain OK with the list; it says how
// many were really cut and how many only fell back.
func TestCutAnswerSaysHowManyOnlyFellBack(t *testing.T) {
	h := start(t)
	for i := 0; i < 20; i++ {
		o := cut.Tuple{Proto: "tcp", Src: "192.0.2.7", Dst: "10.0.0.2", SrcPort: 443, DstPort: uint16(40000 + i)}
		h.fake.cutsMade = append(h.fake.cutsMade, cut.Cut{Original: o, Reply: o.Reverse(), InFastpath: i < 2})
	}
	a, _ := answer(t, h.obj, "cut", `{"address":"192.0.2.7"}`)
	if get(t, a, "count") != int32(20) || get(t, a, "in_fastpath") != int32(2) || get(t, a, "conntrack_only") != int32(18) {
		t.Errorf("count %v, in_fastpath %v, conntrack_only %v: want 20, 2 and 18",
			get(t, a, "count"), get(t, a, "in_fastpath"), get(t, a, "conntrack_only"))
	}
}

// A list its method already held back (it says "<list>_total" over the
// list's length) marks the answer truncated too, and keeps its total.
func TestAHeldBackListMarksTheAnswer(t *testing.T) {
	in := ubus.Table{{Name: "blocklists", Value: ubus.Array{ubus.Table{
		{Name: "errors", Value: ubus.Array{"a", "b"}}, {Name: "errors_total", Value: int32(10000)},
	}}}}
	got, err := fit(in, "")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := got.Get("truncated"); v != true {
		t.Errorf("no truncated in %v", got)
	}
	whole, _ := fit(ubus.Table{{Name: "errors", Value: ubus.Array{"a"}}, {Name: "errors_total", Value: int32(1)}}, "")
	if _, ok := whole.Get("truncated"); ok {
		t.Errorf("a whole list marked truncated: %v", whole)
	}
}
