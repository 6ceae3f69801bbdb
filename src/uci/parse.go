package uci

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
)

// statement is one parsed command with where its text lies, so Set can
// rewrite exactly that text.
type statement struct {
	kind       byte // 'p'ackage, 'c'onfig, 'o'ption, 'l'ist
	start, end int  // input offsets from the command word to the end of its last argument
	line       int  // line of the command word
	args       []token
	section    int // index into File.Sections; -1 for package
}

// Parse reads a UCI config file as libuci does in strict mode (the mode of
// the uci command and of the firewall's loader). name is used in error
// messages and, by its base name, as the package name.
func Parse(name string, data []byte) (*File, error) {
	f := &File{Name: name, Package: filepath.Base(name), src: data}
	if name == "" {
		f.Package = ""
	}
	if len(data) > MaxFileSize {
		return nil, &ParseError{File: name, Msg: fmt.Sprintf("file is %d bytes, over the %s a config file may have", len(data), sizeText(MaxFileSize)),
			Fix: "this is not a config file: restore it from a backup (or /rom/etc/config)"}
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, &ParseError{File: name, Line: 1 + bytes.Count(data[:i], []byte{'\n'}),
			Msg: "NUL byte in config file", Fix: "the file is not text; restore it from a backup (or /rom/etc/config)"}
	}
	p := &parser{s: scanner{file: name, in: data}, f: f, cur: -1, byName: map[string]int{}}
	if err := p.run(); err != nil {
		return nil, err
	}
	f.byName = p.byName
	return f, nil
}

type parser struct {
	s       scanner
	f       *File
	cur     int            // section options go to; -1 before the first config line
	nsec    int            // sections allocated so far: the XX of cfgXXYYYY
	cmdLine int            // line of the command word being parsed
	byName  map[string]int // named sections by name: index into f.Sections
}

func (p *parser) run() (err error) {
	defer func() {
		if r := recover(); r != nil {
			pf, ok := r.(parseFailure)
			if !ok {
				panic(r)
			}
			err = pf.err
		}
	}()
	for p.s.next < len(p.s.in) {
		p.s.pos = 0
		p.s.getln(0)
		if len(p.s.buf) > 0 {
			p.parseLine()
		}
	}
	return nil
}

// parseLine runs every statement of one line; statements after the first
// are separated by ';' (libuci's uci_parse_line).
func (p *parser) parseLine() {
	s := &p.s
	s.skipWhitespace()
	for {
		word, start, end, ok := p.command()
		if !ok || word[0] == '#' {
			return
		}
		if !isCommand(word) {
			p.invalidCommand(word)
		}
		// uci_increase_pos: step over the word and its delimiter
		if end+1 > len(s.buf) {
			p.invalidCommand(word) // nothing after the word, at the end of the file
		}
		s.pos = end + 1
		switch {
		case word == "p" || word == "package":
			p.parsePackage(start)
		case word == "c" || word == "config":
			p.parseConfig(start)
		case word == "o" || word == "option":
			p.parseOption(start, false)
		case word == "l" || word == "list":
			p.parseOption(start, true)
		default:
			p.invalidCommand(word)
		}
	}
}

func (p *parser) invalidCommand(word string) {
	line := p.s.line
	bare := strings.TrimRight(word, " \t\r\n\v\f")
	switch bare {
	case "p", "package":
		p.s.fail(line, "package without a name", "write package NAME or remove the line")
	case "c", "config":
		p.s.fail(line, "config without a section type", "write config TYPE ['NAME']")
	case "o", "option", "l", "list":
		p.s.fail(line, bare+" without a name", "write "+bare+" NAME 'value'")
	}
	if len(bare) > 40 {
		bare = bare[:40] + "..."
	}
	p.s.fail(line, fmt.Sprintf("invalid command %q", bare),
		"a statement starts with package, config, option or list; a comment starts with #")
}

func isCommand(w string) bool {
	switch w {
	case "p", "package", "c", "config", "o", "option", "l", "list":
		return true
	}
	return false
}

// command is libuci's strtok(" \t"): the next command word, which ends at a
// space or tab only (so "config\n" is a word, and an invalid one). end is
// the buffer position just after it.
func (p *parser) command() (word string, start, end int, ok bool) {
	s := &p.s
	i := s.pos
	for c := s.at(i); c == ' ' || c == '\t'; c = s.at(i) {
		i++
	}
	if s.at(i) == 0 {
		return "", 0, 0, false
	}
	j := i
	for c := s.at(j); c != 0 && c != ' ' && c != '\t'; c = s.at(j) {
		j++
	}
	word = string(s.buf[i:j])
	p.cmdLine = s.lineOf(i)
	if j < len(s.buf) {
		s.buf[j] = 0
	}
	return word, s.offsetAt(i), j, true
}

// assertEOL refuses a further argument (libuci's assert_eol, strict mode).
func (p *parser) assertEOL(cmd argName) {
	t := p.s.nextArg(argName{})
	if t.val == "" {
		return
	}
	what := cmd.what
	if cmd.name != "" {
		what += " '" + cmd.name + "'"
	}
	msg := fmt.Sprintf("too many arguments for %s (unexpected %q)", what, t.val)
	switch cmd.what {
	case "package":
		p.s.fail(p.s.line, msg, "write package NAME")
	case "config":
		p.s.fail(p.s.line, msg, "a section starts with config TYPE ['NAME']; quote a name only once")
	}
	p.s.fail(p.s.line, msg, fmt.Sprintf("quote a value that contains spaces: %s %s 'a b'", cmd.what, cmd.name))
}

func (p *parser) statement(kind byte, start int, args ...token) {
	end := start
	for _, c := range p.s.in[start:] {
		if c == ' ' || c == '\t' || c == '\n' || c == 0 {
			break
		}
		end++
	}
	for _, a := range args {
		if a.end > a.start && a.end > end { // an absent argument has no text
			end = a.end
		}
	}
	p.f.stmts = append(p.f.stmts, statement{kind: kind, start: start, end: end,
		line: p.cmdLine, args: args, section: p.cur})
	if p.cur >= 0 && kind != 'p' {
		sec := p.f.Sections[p.cur]
		sec.stmts = append(sec.stmts, len(p.f.stmts)-1)
	}
}

func (p *parser) parsePackage(start int) {
	name := p.s.nextArg(argName{"package name", ""})
	if name.val == "" {
		p.s.fail(p.s.line, "package without a name", "write package NAME or remove the line")
	}
	if !validPackage(name.val) {
		p.s.fail(p.s.line, fmt.Sprintf("invalid package name %q", name.val),
			"use letters, digits, _ and - only")
	}
	p.assertEOL(argName{what: "package"})
	// A file loaded by name ignores its package statement (libuci's
	// "single" import), so it is kept as text and has no other effect.
	cur := p.cur
	p.cur = -1
	p.statement('p', start, name)
	p.cur = cur
}

func (p *parser) parseConfig(start int) {
	typ := p.s.nextArg(argName{"section type", ""})
	if typ.val == "" {
		p.s.fail(p.s.line, "config without a section type", "write config TYPE ['NAME']")
	}
	if !validType(typ.val) {
		p.s.fail(p.s.line, fmt.Sprintf("invalid section type %q", typ.val),
			"a type is printable characters without spaces, e.g. config zone")
	}
	name := p.s.nextArg(argName{"section name", ""})
	if name.val != "" && !validName(name.val) {
		p.s.fail(p.s.line, fmt.Sprintf("invalid section name %q: only letters, digits and _ are allowed", name.val),
			fmt.Sprintf("rename it, e.g. '%s'", sanitizeName(name.val)))
	}
	p.assertEOL(argName{what: "config"})

	f := p.f
	idx, seen := p.byName[name.val]
	switch {
	case name.val == "":
		p.nsec++
		f.Sections = append(f.Sections, &Section{Type: typ.val, Name: autoName(p.nsec, typ.val),
			Anonymous: true, line: typ.line})
		p.cur = len(f.Sections) - 1
	case seen:
		// A repeated name reopens the section: its options merge.
		if old := f.Sections[idx]; old.Type != typ.val {
			p.s.fail(p.s.line, fmt.Sprintf("section %q is declared again with type %q; line %d declared it as %q",
				name.val, typ.val, old.line, old.Type), "rename one of the two sections")
		}
		p.cur = idx
	default:
		p.nsec++
		f.Sections = append(f.Sections, &Section{Type: typ.val, Name: name.val, line: typ.line})
		p.cur = len(f.Sections) - 1
		p.byName[name.val] = p.cur
	}
	p.statement('c', start, typ, name)
}

func (p *parser) parseOption(start int, list bool) {
	cmd := "option"
	if list {
		cmd = "list"
	}
	if p.cur < 0 {
		p.s.fail(p.s.line, cmd+" before the first section", "add a config TYPE line above it")
	}
	name := p.s.nextArg(argName{cmd + " name", ""})
	if name.val == "" {
		p.s.fail(p.s.line, cmd+" without a name", "write "+cmd+" NAME 'value'")
	}
	if !validName(name.val) {
		p.s.fail(p.s.line, fmt.Sprintf("invalid %s name %q: only letters, digits and _ are allowed", cmd, name.val),
			fmt.Sprintf("rename it, e.g. '%s'", sanitizeName(name.val)))
	}
	value := p.s.nextArg(argName{cmd, name.val})
	p.assertEOL(argName{cmd, name.val})

	sec := p.f.Sections[p.cur]
	if list {
		sec.addList(name.val, value.val)
	} else {
		sec.setOption(name.val, value.val)
	}
	p.statement(cmd[0], start, name, value)
}

// setOption is libuci's uci_set as its parser calls it: an empty value
// changes nothing (uci_set returns early, as the parser's lookup is never
// "complete"), a new value replaces the option where it stands, a list
// included.
func (s *Section) setOption(name, value string) {
	if value == "" {
		return
	}
	i := s.parsedOptionIndex(name)
	if i < 0 {
		s.appendOption(&Option{Name: name, Values: []string{value}})
		return
	}
	if o := s.Options[i]; !o.IsList && o.Values[0] == value {
		return
	}
	s.Options[i] = &Option{Name: name, Values: []string{value}}
}

// addList is libuci's uci_add_list: an option turns into a list, where it
// stands, that keeps its value as the first element.
func (s *Section) addList(name, value string) {
	i := s.parsedOptionIndex(name)
	if i < 0 {
		s.appendOption(&Option{Name: name, Values: []string{value}, IsList: true})
		return
	}
	o := s.Options[i]
	if o.IsList {
		o.Values = append(o.Values, value)
		return
	}
	s.Options[i] = &Option{Name: name, Values: []string{o.Values[0], value}, IsList: true}
}
