package ubus

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends v as compact JSON: a value of the blobmsg model
// (objects in wire order), or any Go value FromGo converts.
func AppendJSON(b []byte, v any) ([]byte, error) {
	w := jsonWriter{b: b}
	err := w.value(v, 0)
	return w.b, err
}

// AppendJSONIndent is AppendJSON with one line per member, each level
// indented by indent, laid out as encoding/json's MarshalIndent does.
func AppendJSONIndent(b []byte, v any, indent string) ([]byte, error) {
	w := jsonWriter{b: b, indent: indent}
	err := w.value(v, 0)
	return w.b, err
}

// MarshalJSON prints the table as a JSON object in wire order, as
// `ubus call` does.
func (t Table) MarshalJSON() ([]byte, error) { return AppendJSON(nil, t) }

// MarshalJSON prints the array as a JSON array.
func (a Array) MarshalJSON() ([]byte, error) { return AppendJSON(nil, a) }

type jsonWriter struct {
	b      []byte
	indent string
}

func (w *jsonWriter) value(v any, depth int) error {
	if depth > maxBlobNesting {
		return fmt.Errorf("JSON: value nested deeper than %d levels", maxBlobNesting)
	}
	switch v := v.(type) {
	case nil:
		w.b = append(w.b, "null"...)
	case bool:
		w.b = strconv.AppendBool(w.b, v)
	case int8:
		w.b = strconv.AppendInt(w.b, int64(v), 10)
	case int16:
		w.b = strconv.AppendInt(w.b, int64(v), 10)
	case int32:
		w.b = strconv.AppendInt(w.b, int64(v), 10)
	case int64:
		w.b = strconv.AppendInt(w.b, v, 10)
	case float64:
		w.b = appendJSONFloat(w.b, v)
	case string:
		w.b = appendJSONString(w.b, v)
	case Table:
		w.b = append(w.b, '{')
		for i, f := range v {
			w.member(i, depth)
			w.b = appendJSONString(w.b, f.Name)
			w.b = append(w.b, ':')
			if w.indent != "" {
				w.b = append(w.b, ' ')
			}
			if err := w.value(f.Value, depth+1); err != nil {
				return err
			}
		}
		w.end(len(v), depth)
		w.b = append(w.b, '}')
	case Array:
		w.b = append(w.b, '[')
		for i, e := range v {
			w.member(i, depth)
			if err := w.value(e, depth+1); err != nil {
				return err
			}
		}
		w.end(len(v), depth)
		w.b = append(w.b, ']')
	default:
		c, err := FromGo(v)
		if err != nil {
			return err
		}
		return w.value(c, depth)
	}
	return nil
}

// member starts the i-th member of an object or array at depth.
func (w *jsonWriter) member(i, depth int) {
	if i > 0 {
		w.b = append(w.b, ',')
	}
	w.newline(depth + 1)
}

// end closes a list of n members: empty lists stay "{}" and "[]".
func (w *jsonWriter) end(n, depth int) {
	if n > 0 {
		w.newline(depth)
	}
}

func (w *jsonWriter) newline(depth int) {
	if w.indent == "" {
		return
	}
	w.b = append(w.b, '\n')
	for i := 0; i < depth; i++ {
		w.b = append(w.b, w.indent...)
	}
}

// appendJSONFloat prints the shortest text that parses back to f, in
// encoding/json's choice of plain or exponent form; a whole number keeps
// ".0" so that it stays a double when parsed again, as libubox's "%f"
// does. JSON has no NaN or infinity; libubox would print "nan", which no
// JSON parser accepts, so null is the honest answer.
func appendJSONFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 -> 1e-7, as encoding/json prints it
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
		return b
	}
	for _, c := range b[start:] {
		if c == '.' {
			return b
		}
	}
	return append(b, ".0"...)
}

// appendJSONString quotes s. Where libubox's blobmsg_format_string (what
// the ubus CLI prints) and encoding/json agree — `"` and `\` escaped,
// \b \n \r \t short, other control characters as \u00XX — both are
// followed. Where they differ, the ubus CLI wins as long as the output
// stays valid JSON: "/" is escaped as "\/", form feed is \u000c, and
// "<", ">", "&", U+2028 and U+2029 are printed as they are (encoding/json
// escapes them for HTML and JavaScript embedding). The exceptions are
// NUL and invalid UTF-8: libubox stops at NUL and copies invalid bytes,
// which no JSON parser accepts; like encoding/json, NUL is \u0000 and
// each invalid byte becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0 // s[start:i] is still to be copied
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, `\ufffd`...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		var esc byte
		switch c {
		case '"', '\\', '/':
			esc = c
		case '\b':
			esc = 'b'
		case '\n':
			esc = 'n'
		case '\r':
			esc = 'r'
		case '\t':
			esc = 't'
		default:
			if c >= ' ' {
				i++
				continue
			}
			esc = 'u'
		}
		b = append(b, s[start:i]...)
		b = append(b, '\\', esc)
		if esc == 'u' {
			b = append(b, '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
