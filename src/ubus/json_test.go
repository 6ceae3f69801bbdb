package ubus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fastpath-wrt/fastpath/src/ubus/internal/vectors"
)

// oracleJSON prints a value of the model with encoding/json doing every
// scalar, and the writer's documented choices applied on top: no HTML
// escapes, "/" as "\/", form feed as \u000c, U+2028/U+2029 raw, ".0" on
// whole doubles, NaN and infinities as null.
func oracleJSON(t testing.TB, v any) string {
	t.Helper()
	var b strings.Builder
	var walk func(v any)
	marshal := func(v any) string {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatalf("encoding/json cannot print %#v: %v", v, err)
		}
		return strings.TrimSuffix(buf.String(), "\n")
	}
	differ := map[string]string{`"/"`: `\/`, `"\f"`: `\u000c`, `"\u2028"`: "\u2028", `"\u2029"`: "\u2029"}
	scalar := func(v any) {
		s, ok := v.(string)
		if !ok {
			b.WriteString(marshal(v))
			return
		}
		// one character (or invalid byte) at a time, to apply the choices
		b.WriteByte('"')
		for i := 0; i < len(s); {
			_, size := utf8.DecodeRuneInString(s[i:])
			q := marshal(s[i : i+size])
			if d, ok := differ[q]; ok {
				b.WriteString(d)
			} else {
				b.WriteString(q[1 : len(q)-1])
			}
			i += size
		}
		b.WriteByte('"')
	}
	walk = func(v any) {
		switch v := v.(type) {
		case Table:
			b.WriteByte('{')
			for i, f := range v {
				if i > 0 {
					b.WriteByte(',')
				}
				scalar(f.Name)
				b.WriteByte(':')
				walk(f.Value)
			}
			b.WriteByte('}')
		case Array:
			b.WriteByte('[')
			for i, e := range v {
				if i > 0 {
					b.WriteByte(',')
				}
				walk(e)
			}
			b.WriteByte(']')
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				b.WriteString("null")
				return
			}
			before := b.Len()
			scalar(v)
			if !strings.ContainsAny(b.String()[before:], ".e") {
				b.WriteString(".0")
			}
		default:
			scalar(v)
		}
	}
	walk(v)
	return b.String()
}

// tokens lists what encoding/json's decoder reads from text (numbers as
// they are written), or its error.
func tokens(text []byte) ([]any, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var out []any
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		out = append(out, tok)
	}
	// Token does not check that a delimiter follows what it expects, and
	// accepts several top-level values; Valid does.
	if !json.Valid(text) {
		return nil, fmt.Errorf("json.Valid refuses it")
	}
	return out, nil
}

// modelTokens lists a model value as encoding/json's tokens.
func modelTokens(v any) []any {
	var out []any
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case Table:
			out = append(out, json.Delim('{'))
			for _, f := range v {
				out = append(out, f.Name)
				walk(f.Value)
			}
			out = append(out, json.Delim('}'))
		case Array:
			out = append(out, json.Delim('['))
			for _, e := range v {
				walk(e)
			}
			out = append(out, json.Delim(']'))
		default:
			out = append(out, v)
		}
	}
	walk(v)
	return out
}

// sameTokens compares the model's tokens with encoding/json's: numbers by
// value (integers exactly), the rest as they are.
func sameTokens(model, oracle []any) error {
	if len(model) != len(oracle) {
		return fmt.Errorf("%d tokens, encoding/json reads %d", len(model), len(oracle))
	}
	for i, m := range model {
		o := oracle[i]
		if n, ok := o.(json.Number); ok {
			if want, err := strconv.ParseInt(string(n), 10, 64); err == nil {
				if got, ok := toInt64(m); !ok || got != want {
					return fmt.Errorf("token %d: %#v, encoding/json reads %s", i, m, n)
				}
				continue
			}
			want, _ := strconv.ParseFloat(string(n), 64)
			if got, ok := m.(float64); !ok || got != want {
				return fmt.Errorf("token %d: %#v, encoding/json reads %s", i, m, n)
			}
			continue
		}
		if m != o {
			return fmt.Errorf("token %d: %#v, encoding/json reads %#v", i, m, o)
		}
	}
	return nil
}

// checkParse compares ParseJSON with encoding/json on one text.
func checkParse(t *testing.T, text []byte) {
	t.Helper()
	v, err := ParseJSON(text)
	want, oerr := tokens(text)
	if oerr != nil {
		if err == nil {
			t.Errorf("%q parsed as %#v; encoding/json: %v", text, v, oerr)
		}
		return
	}
	if err != nil {
		if strings.Contains(err.Error(), "out of range") || strings.Contains(err.Error(), "nested deeper") {
			return // a number beyond float64 (encoding/json keeps its text), or our depth bound
		}
		t.Errorf("%q: %v; encoding/json reads it", text, err)
		return
	}
	if err := sameTokens(modelTokens(v), want); err != nil {
		t.Errorf("%q: %v", text, err)
	}
}

// checkWrite compares AppendJSON with the oracle and encoding/json's
// reading of the output.
func checkWrite(t *testing.T, v any) {
	t.Helper()
	got, err := AppendJSON(nil, v)
	if err != nil {
		t.Fatalf("%#v: %v", v, err)
	}
	if want := oracleJSON(t, v); string(got) != want {
		t.Errorf("writer\n%s\nencoding/json\n%s", got, want)
	}
	toks, err := tokens(got)
	if err != nil {
		t.Fatalf("writer's %s is not JSON: %v", got, err)
	}
	if err := sameTokens(modelTokens(normalizeStrings(v)), toks); err != nil {
		t.Errorf("%s: %v", got, err)
	}
}

// normalizeStrings makes strings what a JSON reader gets back from them:
// invalid UTF-8 as U+FFFD; NaN and infinities become null.
func normalizeStrings(v any) any {
	switch v := v.(type) {
	case Table:
		out := make(Table, len(v))
		for i, f := range v {
			out[i] = Field{normalizeStrings(f.Name).(string), normalizeStrings(f.Value)}
		}
		return out
	case Array:
		out := make(Array, len(v))
		for i, e := range v {
			out[i] = normalizeStrings(e)
		}
		return out
	case string:
		var b strings.Builder
		for _, r := range v { // one U+FFFD per invalid byte, as encoding/json
			b.WriteRune(r)
		}
		return b.String()
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
	}
	return v
}

var awkwardStrings = func() []string {
	s := []string{"", "plain", `quote " backslash \ slash /`, "<tag> & amp", "\u2028\u2029", "é ü 日本 🙂",
		"\xff", "a\xc3", "\xed\xa0\x80", "\x7f", "nul\x00inside", "\ufffd", "tab\tnl\nret\rbs\bff\f"}
	for c := 0; c < 0x20; c++ {
		s = append(s, string(rune(c)))
	}
	for c := 0x80; c < 0x100; c++ {
		s = append(s, string([]byte{byte(c)}))
	}
	return s
}()

var awkwardNumbers = []any{
	int8(-128), int16(math.MinInt16), int32(math.MaxInt32), int32(math.MinInt32), int64(math.MaxInt64), int64(math.MinInt64),
	0.0, math.Copysign(0, -1), 1.0, -1.5, 3.25, 1e20, 1e21, 1e22, 123456789.0, 1e-6, 1e-7, 5e-324, math.MaxFloat64,
	-math.SmallestNonzeroFloat64, 0.1, 1.0 / 3, math.NaN(), math.Inf(1), math.Inf(-1),
}

// The writer prints what encoding/json prints, but for the choices its
// comment names, for every scalar kind and for every recorded table.
func TestWriterMatchesEncodingJSON(t *testing.T) {
	for _, s := range awkwardStrings {
		checkWrite(t, Table{{s, s}})
	}
	for _, n := range awkwardNumbers {
		checkWrite(t, Array{n})
	}
	checkWrite(t, Table{{"t", true}, {"f", false}, {"n", nil}, {"e", Table{}}, {"a", Array{}}, {"x", Array{Table{{"", Array{nil}}}}}})
	n := 0
	for _, s := range loadVectors(t) {
		for _, vm := range s.Messages {
			m, err := DecodeMessage(vm.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []AttrID{AttrData, AttrSignature} {
				if _, ok := m.Get(id); !ok {
					continue
				}
				tab, err := m.Table(id)
				if err != nil {
					t.Fatal(err)
				}
				checkWrite(t, tab)
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no recorded tables")
	}
}

func TestWriterIndentsAsEncodingJSON(t *testing.T) {
	v := Table{{"a", int32(1)}, {"e", Table{}}, {"l", Array{}}, {"t", Table{{"x", Array{int32(1), "two", Table{{"y", nil}}}}}}}
	got, err := AppendJSONIndent(nil, v, "  ")
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Indent(&want, []byte(oracleJSON(t, v)), "", "  "); err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() {
		t.Errorf("indented\n%s\nencoding/json\n%s", got, want.String())
	}
}

// parseSamples are texts both parsers must agree on, valid or not.
var parseSamples = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1`, `-1`, `01`, `-`, `1.`, `.5`, `1.5e`, `1e5`, `1E+5`, `1e-5`, `2147483648`, `-2147483649`,
	`9223372036854775807`, `9223372036854775808`, `-9223372036854775809`, `1e400`, `true`, `false`, `null`, `tru`, `nul`, `True`,
	`{"a":1,"a":2}`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{1:2}`, `{"a":}`, `[`, `{`, `"`, `"\`, `"\u12"`, `"\x"`,
	`"\ud83d\ude42"`, `"\ud83d"`, `"\ude42"`, `"\ud83dx"`, `"\ud83d\u0041"`, `"\u0000"`, `"\/\b\f\n\r\t\"\\"`, "\"\x01\"",
	"\"\xff\"", "\"a\xc3\"", "\"\xed\xa0\x80\"", " \t\r\n[ 1 , {\"k\" : [ ] } ] \n", `1 2`, `{} x`, `[]]`, "\ufeff{}",
	`{"a":[1,"two",{"three":3}],"b":null,"c":3.25,"d":5000000000}`,
}

// ParseJSON accepts what encoding/json accepts and reads the same tokens,
// over hand-picked texts, the ubus CLI's recorded output and the vector
// files themselves.
func TestParserMatchesEncodingJSON(t *testing.T) {
	for _, s := range parseSamples {
		checkParse(t, []byte(s))
	}
	deep := strings.Repeat("[", maxBlobNesting+2) + strings.Repeat("]", maxBlobNesting+2)
	if _, err := ParseJSON([]byte(deep)); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("%d levels of arrays: %v", maxBlobNesting+2, err)
	}
	checkParse(t, []byte(deep[1:len(deep)-1]))
	files, _ := filepath.Glob(filepath.Join(vectors.Dir(), "*.json"))
	if len(files) == 0 {
		t.Fatalf("no vector files in %s", vectors.Dir())
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkParse(t, b)
	}
	for _, s := range loadVectors(t) {
		for _, c := range s.CLI {
			if len(c.JSON) > 0 {
				checkParse(t, c.JSON)
			}
			if strings.HasPrefix(c.Stdout, "{") {
				checkParse(t, []byte(c.Stdout))
			}
		}
	}
}

func TestParseErrorsGiveTheOffset(t *testing.T) {
	cases := map[string]string{
		`{"a":1,}`:        "JSON at byte 7: unexpected '}', an object key (string) was expected",
		`[1 2]`:           "JSON at byte 3: unexpected '2', ',' or ']' was expected",
		`{"key" 1}`:       `JSON at byte 7: unexpected '1', ':' was expected after object key "key"`,
		`01`:              "JSON at byte 1: a number must not start with 0",
		"[\"a\x01\"]":     `JSON at byte 3: control character '\x01' in a string must be escaped`,
		`"\q"`:            `JSON at byte 1: invalid escape "\\q" in a string`,
		`[1e400]`:         "JSON at byte 1: number 1e400 is out of range",
		`{"a":[true, nul`: `JSON at byte 12: invalid literal, "null" was expected`,
		`{} x`:            "JSON at byte 3: unexpected 'x' after the top-level value",
		``:                "JSON at byte 0: unexpected end of input, a value was expected",
	}
	for text, want := range cases {
		_, err := ParseJSON([]byte(text))
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v\nwant %s", text, err, want)
		}
	}
	if _, err := ParseJSON(make([]byte, maxJSONText+1)); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("text over the limit: %v", err)
	}
}

// FuzzJSONAgainstEncodingJSON: ParseJSON accepts exactly what
// encoding/json accepts and reads the same tokens; what it parsed prints
// as the oracle prints it, and encoding/json reads that back the same.
func FuzzJSONAgainstEncodingJSON(f *testing.F) {
	for _, s := range parseSamples {
		f.Add([]byte(s))
	}
	for _, s := range awkwardStrings {
		q, _ := json.Marshal(s)
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkParse(t, b)
		if v, err := ParseJSON(b); err == nil {
			checkWrite(t, v)
		}
	})
}
