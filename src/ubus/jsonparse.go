package ubus

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONText bounds the text ParseJSON accepts: four times the largest
// ubus message (1 MiB), room for any escaping of what fits a message.
const maxJSONText = 4 << 20

// ParseJSON parses JSON text (RFC 8259, as strict as encoding/json) into
// the blobmsg value model, keeping the key order of objects (and every
// member of a repeated key): integral numbers that fit int32 become int32,
// larger ones int64, other numbers float64, null nil. Invalid UTF-8 and
// lone surrogates become U+FFFD, as encoding/json makes them. Errors give
// the byte offset.
func ParseJSON(data []byte) (any, error) {
	if len(data) > maxJSONText {
		return nil, fmt.Errorf("JSON text of %d bytes is over the limit of %d", len(data), maxJSONText)
	}
	p := jsonParser{data: data}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if p.skipSpace(); p.pos < len(p.data) {
		return nil, p.errorf("unexpected %s after the top-level value", p.describe())
	}
	return v, nil
}

type jsonParser struct {
	data []byte
	pos  int
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("JSON at byte %d: %s", p.pos, fmt.Sprintf(format, args...))
}

// describe names what is at the current position, for errors.
func (p *jsonParser) describe() string {
	if p.pos >= len(p.data) {
		return "end of input"
	}
	return strconv.QuoteRune(rune(p.data[p.pos]))
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, error) {
	if depth > maxBlobNesting {
		return nil, p.errorf("nested deeper than %d levels", maxBlobNesting)
	}
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of input, a value was expected")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, p.errorf("unexpected %s, a value was expected", p.describe())
}

func (p *jsonParser) literal(word string) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return p.errorf("invalid literal, %q was expected", word)
	}
	p.pos += len(word)
	return nil
}

func (p *jsonParser) object(depth int) (any, error) {
	p.pos++ // '{'
	t := Table{}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return t, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("unexpected %s, an object key (string) was expected", p.describe())
		}
		name, err := p.str()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("unexpected %s, ':' was expected after object key %q", p.describe(), name)
		}
		p.pos++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		t = append(t, Field{Name: name, Value: v})
		if done, err := p.next('}'); done || err != nil {
			return t, err
		}
	}
}

func (p *jsonParser) array(depth int) (any, error) {
	p.pos++ // '['
	a := Array{}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return a, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		if done, err := p.next(']'); done || err != nil {
			return a, err
		}
	}
}

// next reads the ',' before another member or the closing bracket.
func (p *jsonParser) next(closing byte) (done bool, err error) {
	p.skipSpace()
	if p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ',':
			p.pos++
			return false, nil
		case closing:
			p.pos++
			return true, nil
		}
	}
	return false, p.errorf("unexpected %s, ',' or '%c' was expected", p.describe(), closing)
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *jsonParser) number() (any, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	intStart := p.pos
	if n := digits(); n == 0 {
		return nil, p.errorf("a digit was expected in a number")
	} else if n > 1 && p.data[intStart] == '0' {
		p.pos = intStart + 1
		return nil, p.errorf("a number must not start with 0")
	}
	integral := true
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		integral = false
		p.pos++
		if digits() == 0 {
			return nil, p.errorf("a digit was expected after the decimal point")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		integral = false
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf("a digit was expected in the exponent")
		}
	}
	text := string(p.data[start:p.pos])
	if integral {
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return fromInt64(i), nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		p.pos = start
		return nil, p.errorf("number %s is out of range", text)
	}
	return f, nil
}

// str reads a quoted string; p.data[p.pos] is the opening quote.
func (p *jsonParser) str() (string, error) {
	p.pos++
	start := p.pos
	// Fast path: printable ASCII without escapes is the string itself.
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := string(p.data[start:p.pos])
			p.pos++
			return s, nil
		}
		if c == '\\' || c < ' ' || c >= utf8.RuneSelf {
			break
		}
		p.pos++
	}
	out := append([]byte(nil), p.data[start:p.pos]...)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(out), nil
		case c < ' ':
			return "", p.errorf("control character %q in a string must be escaped", c)
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			out = utf8.AppendRune(out, r) // invalid bytes: RuneError, U+FFFD
			p.pos += size
		case c != '\\':
			out = append(out, c)
			p.pos++
		default:
			if p.pos+1 >= len(p.data) {
				p.pos = len(p.data)
				return "", p.errorf("unexpected end of input in a string escape")
			}
			e := p.data[p.pos+1]
			if e == 'u' {
				r, err := p.unicodeEscape()
				if err != nil {
					return "", err
				}
				out = utf8.AppendRune(out, r)
				continue
			}
			switch e {
			case '"', '\\', '/':
			case 'b':
				e = '\b'
			case 'f':
				e = '\f'
			case 'n':
				e = '\n'
			case 'r':
				e = '\r'
			case 't':
				e = '\t'
			default:
				return "", p.errorf("invalid escape %q in a string", []byte{'\\', e})
			}
			out = append(out, e)
			p.pos += 2
		}
	}
	return "", p.errorf("unexpected end of input in a string")
}

// unicodeEscape reads \uXXXX (and a second one for a surrogate pair).
func (p *jsonParser) unicodeEscape() (rune, error) {
	r, ok := p.hex4(p.pos + 2)
	if !ok {
		return 0, p.errorf("invalid \\u escape, four hex digits were expected")
	}
	p.pos += 6
	if !utf16.IsSurrogate(r) {
		return r, nil
	}
	if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
		if r2, ok := p.hex4(p.pos + 2); ok {
			if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
				p.pos += 6
				return pair, nil
			}
		}
	}
	return utf8.RuneError, nil // a lone surrogate, as encoding/json takes it
}

func (p *jsonParser) hex4(at int) (rune, bool) {
	if at+4 > len(p.data) {
		return 0, false
	}
	var r rune
	for _, c := range p.data[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
