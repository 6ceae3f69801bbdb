package rpc

import (
	"fmt"
	"unicode/utf8"

	"github.com/fastpath-wrt/fastpath/src/ubus"
)

// Every answer of the object fits in one ubus message, whatever the
// router's state (thousands of cuts, a block list of malformed lines), by
// one rule applied to every method's answer:
//
//   - a text longer than maxText bytes is cut and ends in "…";
//   - a list holds its first listItems items, except the list a method
//     pages itself with a limit argument (flows, cuts);
//   - what is still over answerBudget loses the tail of its heaviest list,
//     and again, until it fits.
//
// A table whose list lost items gets "<list>_total", the list's length
// before (unless the method set it), and the answer "truncated": true.
const (
	maxText   = 4096
	listItems = 100
)

// answerBudget keeps answers under ubusd's message limit, with room for
// the message's own attributes.
const answerBudget = ubus.MaxMessageLen - 4096

// fit applies the rule to v; paged names the top-level list whose length
// the method's own limit decides.
func fit(v any, paged string) (ubus.Table, error) {
	t, err := ubus.ToTable(v)
	if err != nil {
		return nil, err
	}
	f := fitter{paged: paged}
	t = f.capTable(t, true)
	if f.cut {
		t = setField(t, "truncated", true)
	}
	return fitBytes(t)
}

// fitBytes shortens the heaviest list of t until t fits in answerBudget.
func fitBytes(t ubus.Table) (ubus.Table, error) {
	for size := tableSize(t); size > answerBudget; size = tableSize(t) {
		path, own := heaviestList(t, nil)
		if path == nil || own == 0 {
			return nil, fmt.Errorf("the answer takes %d bytes, over ubus's %d, and has no list to shorten", size, answerBudget)
		}
		t = setField(trimList(t, path, size-answerBudget+64), "truncated", true) // 64: room for a _total
	}
	return t, nil
}

type fitter struct {
	paged string
	cut   bool // something was shortened
}

// capTable cuts the long texts and lists of t, copying only what changes.
func (f *fitter) capTable(t ubus.Table, top bool) ubus.Table {
	var out ubus.Table
	var totals []ubus.Field
	for i, fl := range t {
		v := fl.Value
		if a, ok := v.(ubus.Array); ok && heldBack(t, fl.Name, len(a)) {
			f.cut = true // the method sent only the first, and says so
		}
		if a, ok := v.(ubus.Array); ok && len(a) > listItems && !(top && fl.Name == f.paged) {
			totals = append(totals, ubus.Field{Name: fl.Name + "_total", Value: int32(len(a))})
			v = a[:listItems]
		}
		v = f.capValue(v)
		if !same(v, fl.Value) && out == nil {
			out = append(make(ubus.Table, 0, len(t)+len(totals)), t[:i]...)
		}
		if out != nil {
			out = append(out, ubus.Field{Name: fl.Name, Value: v})
		}
	}
	if out == nil {
		return t
	}
	f.cut = f.cut || len(totals) > 0
	for _, tf := range totals {
		if _, ok := out.Get(tf.Name); !ok {
			out = append(out, tf)
		}
	}
	return out
}

// heldBack reports whether t says its list name holds fewer than all:
// a "<name>_total" over n.
func heldBack(t ubus.Table, name string, n int) bool {
	v, ok := t.Get(name + "_total")
	if !ok {
		return false
	}
	switch total := v.(type) {
	case int32:
		return int(total) > n
	case int64:
		return int(total) > n
	}
	return false
}

func (f *fitter) capValue(v any) any {
	switch v := v.(type) {
	case string:
		if len(v) > maxText {
			f.cut = true
			return shorten(v, maxText)
		}
	case ubus.Table:
		return f.capTable(v, false)
	case ubus.Array:
		var out ubus.Array
		for i, e := range v {
			c := f.capValue(e)
			if !same(c, e) && out == nil {
				out = append(make(ubus.Array, 0, len(v)), v[:i]...)
			}
			if out != nil {
				out = append(out, c)
			}
		}
		if out != nil {
			return out
		}
	}
	return v
}

// same tells whether capValue returned v itself: texts by value, tables
// and lists by their first element's address and length.
func same(a, b any) bool {
	switch a := a.(type) {
	case ubus.Table:
		b, ok := b.(ubus.Table)
		return ok && len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
	case ubus.Array:
		b, ok := b.(ubus.Array)
		return ok && len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
	case string:
		b, ok := b.(string)
		return ok && a == b
	}
	return true // scalars are never changed
}

// shorten cuts s to at most n bytes on a rune boundary, ending in "…".
func shorten(s string, n int) string {
	n -= len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// heaviestList finds the list (a field of a table) whose own items weigh
// the most, not counting the lists of tables nested in them; path leads to
// it, one index per level.
func heaviestList(t ubus.Table, at []int) (path []int, own int) {
	for i, fl := range t {
		if p, w := heaviestIn(fl.Name, fl.Value, append(at, i)); w > own {
			path, own = p, w
		}
	}
	return path, own
}

func heaviestIn(name string, v any, at []int) (path []int, own int) {
	switch v := v.(type) {
	case ubus.Table:
		return heaviestList(v, at)
	case ubus.Array:
		if len(v) == 0 {
			return nil, 0
		}
		own = attrSize(name, v)
		var best []int
		bestW := 0
		for i, e := range v {
			if et, ok := e.(ubus.Table); ok {
				own -= nestedListSize(et)
				if p, w := heaviestList(et, append(at, i)); w > bestW {
					best, bestW = p, w
				}
			}
		}
		if bestW > own {
			return best, bestW
		}
		return append([]int(nil), at...), own
	}
	return nil, 0
}

// nestedListSize is what the lists of t and of its nested tables weigh.
func nestedListSize(t ubus.Table) int {
	n := 0
	for _, fl := range t {
		switch v := fl.Value.(type) {
		case ubus.Array:
			n += attrSize(fl.Name, v)
		case ubus.Table:
			n += nestedListSize(v)
		}
	}
	return n
}

// trimList drops the tail of the list at path until at least excess bytes
// are gone (or the list is empty), copying the tables and lists on the way.
func trimList(t ubus.Table, path []int, excess int) ubus.Table {
	out := append(ubus.Table(nil), t...)
	fl := &out[path[0]]
	if len(path) > 1 {
		switch v := fl.Value.(type) {
		case ubus.Table:
			fl.Value = trimList(v, path[1:], excess)
		case ubus.Array:
			a := append(ubus.Array(nil), v...)
			a[path[1]] = trimList(a[path[1]].(ubus.Table), path[2:], excess)
			fl.Value = a
		}
		return out
	}
	a := fl.Value.(ubus.Array)
	total := len(a)
	n := len(a)
	for gone := 0; n > 0 && gone < excess; n-- {
		gone += attrSize("", a[n-1])
	}
	fl.Value = a[:n]
	if _, ok := out.Get(fl.Name + "_total"); !ok {
		out = append(out, ubus.Field{Name: fl.Name + "_total", Value: int32(total)})
	}
	return out
}

// setField sets name in a copy of t, adding it when t has none.
func setField(t ubus.Table, name string, v any) ubus.Table {
	out := append(make(ubus.Table, 0, len(t)+1), t...)
	for i := range out {
		if out[i].Name == name {
			out[i].Value = v
			return out
		}
	}
	return append(out, ubus.Field{Name: name, Value: v})
}

// tableSize is what t takes as blobmsg, as ubus.EncodeTable writes it.
func tableSize(t ubus.Table) int {
	n := 0
	for _, fl := range t {
		n += attrSize(fl.Name, fl.Value)
	}
	return n
}

// attrSize is one blobmsg attribute's length with its padding: the 4-byte
// header, the be16 name length, the name and its NUL padded to 4, then the
// value padded to 4.
func attrSize(name string, v any) int {
	n := 4 + align4(2+len(name)+1)
	switch v := v.(type) {
	case nil:
	case bool, int8:
		n += 1
	case int16:
		n += 2
	case int32:
		n += 4
	case int64, float64:
		n += 8
	case string:
		n += len(v) + 1
	case ubus.Table:
		n += tableSize(v)
	case ubus.Array:
		for _, e := range v {
			n += attrSize("", e)
		}
	default:
		c, err := ubus.FromGo(v)
		if err != nil {
			return n
		}
		return attrSize(name, c)
	}
	return align4(n)
}

func align4(n int) int { return (n + 3) &^ 3 }
