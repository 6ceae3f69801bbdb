package ubus

import (
	"fmt"
	"strconv"
	"strings"
)

// FormatJSON prints a table as libubox's blobmsg_format_json does, which
// is what `ubus call` (indent) and `ubus listen` (no indent) print: tabs,
// `"name": value`, doubles with six decimals, booleans for INT8.
func FormatJSON(t Table, indent bool) string {
	f := jsonFormatter{indent: indent}
	f.list(t, false)
	return f.b.String()
}

type jsonFormatter struct {
	b       strings.Builder
	indent  bool
	level   int
	scratch []byte
}

func (f *jsonFormatter) separator() {
	if !f.indent {
		return
	}
	f.b.WriteByte('\n')
	f.b.WriteString(strings.Repeat("\t", f.level))
}

// list follows blobmsg_format_json_list: the separator comes after the
// opening bracket even when the list is empty.
func (f *jsonFormatter) list(v any, array bool) {
	open, closing := "{", "}"
	if array {
		open, closing = "[", "]"
	}
	f.b.WriteString(open)
	f.level++
	f.separator()
	n := 0
	emit := func(name string, val any) {
		if n > 0 {
			f.b.WriteByte(',')
			f.separator()
		}
		if !array && name != "" { // libubox prints no key for an empty name
			f.str(name)
			if f.indent {
				f.b.WriteString(": ")
			} else {
				f.b.WriteByte(':')
			}
		}
		f.value(val)
		n++
	}
	switch v := v.(type) {
	case Table:
		for _, fl := range v {
			emit(fl.Name, fl.Value)
		}
	case Array:
		for _, e := range v {
			emit("", e)
		}
	}
	f.level--
	f.separator()
	f.b.WriteString(closing)
}

func (f *jsonFormatter) value(v any) {
	switch v := v.(type) {
	case nil:
		f.b.WriteString("null")
	case bool:
		f.b.WriteString(strconv.FormatBool(v))
	case int8:
		f.b.WriteString(strconv.FormatBool(v != 0))
	case int16:
		f.b.WriteString(strconv.FormatInt(int64(v), 10))
	case int32:
		f.b.WriteString(strconv.FormatInt(int64(v), 10))
	case int64:
		f.b.WriteString(strconv.FormatInt(v, 10))
	case float64:
		fmt.Fprintf(&f.b, "%f", v)
	case string:
		f.str(v)
	case Table:
		f.list(v, false)
	case Array:
		f.list(v, true)
	default:
		f.str(fmt.Sprint(v))
	}
}

// str escapes as blobmsg_format_string does (see appendJSONString for
// the two cases where libubox would print invalid JSON).
func (f *jsonFormatter) str(s string) {
	f.scratch = appendJSONString(f.scratch[:0], s)
	f.b.Write(f.scratch)
}
