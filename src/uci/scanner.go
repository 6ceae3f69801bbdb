package uci

import (
	"bytes"
	"fmt"
	"sort"
)

// scanner is libuci's parse context (file.c) ported byte for byte: a buffer
// holding the current logical line, which libuci mutates in place (it writes
// NUL terminators and copies decoded characters down over the raw ones). The
// mutations decide some corner cases of the grammar (what a ';' after an
// unquoted word does, where a '#' starts a comment), so they are kept rather
// than redesigned. segs records where each physical line read into buf came
// from, which is what lets Set rewrite one token of the original text.
type scanner struct {
	file  string
	in    []byte
	next  int    // offset of the first input byte not yet read into buf
	buf   []byte // current logical line; a 0 byte ends a string, as in C
	segs  []segment
	pos   int
	line  int // physical lines read so far: the line number of buf's last line
	first int // line the current logical line started on
}

// segment is one physical line in buf: buf[at:] (up to the next segment)
// was read from in[from:] on line line. A logical line has one segment per
// physical line, so this costs nothing per byte.
type segment struct{ at, from, line int }

// token is one argument: its decoded value and the raw text it came from.
type token struct {
	val        string
	start, end int // input offsets of the raw text, end exclusive; start == end when empty
	line       int // line the argument starts on
}

// argName names an argument in messages: " in option 'name'"; it is only
// formatted when a message needs it.
type argName struct{ what, name string }

func (a argName) String() string {
	switch {
	case a.what == "":
		return ""
	case a.name == "":
		return " in the " + a.what
	}
	return " in " + a.what + " '" + a.name + "'"
}

// parseFailure carries a *ParseError up through the recursive descent, the
// way libuci's UCI_THROW longjmps; Parse recovers it.
type parseFailure struct{ err *ParseError }

func (s *scanner) fail(line int, msg, fix string) {
	panic(parseFailure{&ParseError{File: s.file, Line: line, Msg: msg, Fix: fix}})
}

func (s *scanner) cur() byte { return s.at(s.pos) }

func (s *scanner) at(i int) byte {
	if i < len(s.buf) {
		return s.buf[i]
	}
	return 0
}

// getln reads the next physical line into buf at offset, dropping whatever
// buf held from offset on (libuci's uci_getln). It reports whether a line
// was read.
//
// A logical line (a statement with its quoted line breaks and backslash
// continuations) longer than MaxStatement is refused, naming the line it
// started on; the input is then consumed past the physical line, so a
// caller that skips bad lines goes on with the next one.
func (s *scanner) getln(offset int) bool {
	s.buf = s.buf[:offset]
	for len(s.segs) > 0 && s.segs[len(s.segs)-1].at >= offset {
		s.segs = s.segs[:len(s.segs)-1]
	}
	if s.next >= len(s.in) {
		return false
	}
	end := len(s.in)
	if i := bytes.IndexByte(s.in[s.next:], '\n'); i >= 0 {
		end = s.next + i + 1 // keep the newline, as fgets does
	}
	s.line++
	if offset == 0 {
		s.first = s.line
	}
	start := s.next
	s.next = end
	if offset+end-start > MaxStatement {
		s.fail(s.first, fmt.Sprintf("statement longer than %s, the limit for one line or value", sizeText(MaxStatement)),
			"a value this long is not configuration: keep large data in a file and name its path in the option")
	}
	s.segs = append(s.segs, segment{at: offset, from: start, line: s.line})
	s.buf = append(s.buf, s.in[start:end]...)
	return true
}

// seg is the segment holding buffer position i (the last one for i past
// the buffer).
func (s *scanner) seg(i int) segment {
	k := sort.Search(len(s.segs), func(k int) bool { return s.segs[k].at > i }) - 1
	if k < 0 {
		return segment{from: s.next, line: s.line}
	}
	return s.segs[k]
}

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func (s *scanner) skipWhitespace() {
	for c := s.cur(); c != 0 && isSpace(c); c = s.cur() {
		s.pos++
	}
}

// addc copies the current character down to target (decoding in place).
func (s *scanner) addc(target *int) {
	s.buf[*target] = s.buf[s.pos]
	*target++
	s.pos++
}

// parseBackslash skips a backslash. A backslash ending the line joins the
// next line (and is dropped with the newline); any other escaped character
// is taken literally, with no C-style decoding.
func (s *scanner) parseBackslash() bool {
	s.pos++
	c := s.cur()
	if c == 0 || c == '\n' || (c == '\r' && s.at(s.pos+1) == '\n' && s.at(s.pos+2) == 0) {
		s.getln(s.pos)
		return false
	}
	return true
}

func (s *scanner) parseDoubleQuote(target *int, what argName) {
	opened := s.lineOf(s.pos)
	s.pos++
	for {
		switch s.cur() {
		case '"':
			s.pos++
			return
		case 0: // the value goes on on the next line
			s.getln(s.pos)
			if s.cur() == 0 {
				s.fail(opened, "unterminated double quote"+what.String()+", opened on this line",
					`close it with " or escape a literal " as \"`)
			}
		case '\\':
			if !s.parseBackslash() {
				continue
			}
			s.addc(target)
		default:
			s.addc(target)
		}
	}
}

func (s *scanner) parseSingleQuote(target *int, what argName) {
	opened := s.lineOf(s.pos)
	s.pos++
	for {
		switch s.cur() {
		case '\'':
			s.pos++
			return
		case 0:
			s.getln(s.pos)
			if s.cur() == 0 {
				s.fail(opened, "unterminated single quote"+what.String()+", opened on this line",
					`close it with ' (inside single quotes write a literal ' as '\'')`)
			}
		default:
			s.addc(target)
		}
	}
}

// lineOf is the physical line buffer position i was read from.
func (s *scanner) lineOf(i int) int {
	if i < len(s.buf) {
		return s.seg(i).line
	}
	return s.line
}

// offsetAt is the input offset of buffer position i (the end of what was
// read when i is past the buffer).
func (s *scanner) offsetAt(i int) int {
	if i < len(s.buf) {
		g := s.seg(i)
		return g.from + i - g.at
	}
	return s.next
}

// parseStr decodes one argument: quoted parts, backslash escapes and bare
// characters concatenated until whitespace, ';', '#' or the end of the line.
// It returns the buffer position where the raw text ended.
func (s *scanner) parseStr(target *int, what argName) int {
	next := true
loop:
	for {
		switch s.cur() {
		case '\'':
			s.parseSingleQuote(target, what)
		case '"':
			s.parseDoubleQuote(target, what)
		case '#':
			s.buf[s.pos] = 0
			break loop
		case 0:
			break loop
		case ';':
			next = false
			break loop
		case '\\':
			if !s.parseBackslash() {
				if c := s.cur(); c == 0 || isSpace(c) {
					break loop
				}
				continue
			}
			s.addc(target)
		default:
			s.addc(target)
		}
		if c := s.cur(); c == 0 || isSpace(c) {
			break
		}
	}
	rawEnd := s.pos
	// the delimiter is stepped over; libuci overwrites it with the
	// terminator below when the word was copied in place
	if s.cur() != 0 && next {
		s.pos++
	}
	if *target < len(s.buf) {
		s.buf[*target] = 0
	}
	return rawEnd
}

// nextArg is libuci's next_arg: the next argument of the statement, "" when
// there is none. what names the argument for error messages.
func (s *scanner) nextArg(what argName) token {
	s.skipWhitespace()
	val := s.pos
	ptr := val
	t := token{line: s.lineOf(val)}
	rawEnd := val
	if s.cur() == ';' {
		s.buf[s.pos] = 0
		s.pos++
	} else {
		rawEnd = s.parseStr(&ptr, what)
	}
	t.val = string(s.buf[val:ptr])
	if rawEnd > val {
		t.start = s.offsetAt(val)
		t.end = s.offsetAt(rawEnd-1) + 1
	} else {
		t.start = s.offsetAt(val)
		t.end = t.start
	}
	return t
}
