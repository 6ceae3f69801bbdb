package uci

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNotFound is wrapped by lookups that find no such section.
var ErrNotFound = errors.New("not found")

// File is one config file (a UCI package): its sections as libuci sees them
// and the exact text they came from.
type File struct {
	Name     string // path the file was read from; used in messages
	Package  string // config name, e.g. "firewall"
	Sections []*Section

	src    []byte         // current text; Bytes returns it
	stmts  []statement    // every statement of src, in order
	byName map[string]int // index into Sections of each named section, as parsed
}

// Section is one `config TYPE ['NAME']` section. Anonymous sections carry
// libuci's generated name (cfgXXYYYY).
type Section struct {
	Type, Name string
	Anonymous  bool
	Options    []*Option

	line      int            // line of its first config statement
	stmts     []int          // indices into File.stmts of the statements that built it
	optByName map[string]int // index into Options, once there are many
}

// Option is an `option` (one value) or a `list` (IsList, any number).
type Option struct {
	Name   string
	Values []string
	IsList bool
}

// Bytes returns the file's text: what was parsed, with Set's edits.
func (f *File) Bytes() []byte {
	return append([]byte(nil), f.src...)
}

// index finds a section by name: through the parser's index, so lookups
// stay constant-time in files of 100,000 sections, or, should Sections
// have been changed since, by a scan.
func (f *File) index(name string) int {
	if i, ok := f.byName[name]; ok && i < len(f.Sections) && f.Sections[i].Name == name {
		return i
	}
	for i, s := range f.Sections {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// Section finds a section by name ("lan", "cfg01e63d") or by type and
// position ("@zone[0]", "@zone[-1]" for the last, "@[2]" for any type).
func (f *File) Section(addr string) (*Section, error) {
	if !strings.HasPrefix(addr, "@") {
		if i := f.index(addr); i >= 0 {
			return f.Sections[i], nil
		}
		return nil, fmt.Errorf("uci: %s has no section %q (%w): check the name with `uci show %s`, or address it by type as @TYPE[N]",
			f.Name, addr, ErrNotFound, f.Package)
	}
	typ, idx, ok := parseExtended(addr)
	if !ok {
		return nil, fmt.Errorf("uci: malformed section address %q: write @TYPE[N], e.g. @defaults[0] or @zone[-1]", addr)
	}
	var of []*Section
	for _, s := range f.Sections {
		if typ == "" || s.Type == typ {
			of = append(of, s)
		}
	}
	if idx < 0 {
		idx += len(of)
	}
	if idx < 0 || idx >= len(of) {
		if len(of) == 0 {
			return nil, fmt.Errorf("uci: %s has no section of type %q for %q (%w): add a `config %s` section",
				f.Name, typ, addr, ErrNotFound, typ)
		}
		return nil, fmt.Errorf("uci: %s has %d sections of type %q, so %q does not exist (%w): use an index from 0 to %d, or -1 for the last",
			f.Name, len(of), typ, addr, ErrNotFound, len(of)-1)
	}
	return of[idx], nil
}

// parseExtended splits "@type[n]" as libuci's uci_lookup_ext_section does.
func parseExtended(addr string) (typ string, idx int, ok bool) {
	open := strings.IndexByte(addr, '[')
	if !strings.HasPrefix(addr, "@") || open < 0 || !strings.HasSuffix(addr, "]") {
		return "", 0, false
	}
	typ = addr[1:open]
	if typ != "" && !validType(typ) {
		return "", 0, false
	}
	n, err := strconv.Atoi(addr[open+1 : len(addr)-1])
	if err != nil {
		return "", 0, false
	}
	return typ, n, true
}

// SectionsOfType lists the sections of one type, in file order.
func (f *File) SectionsOfType(typ string) []*Section {
	var out []*Section
	for _, s := range f.Sections {
		if s.Type == typ {
			out = append(out, s)
		}
	}
	return out
}

// manyOptions is the option count from which a section indexes its options
// by name (a section of thousands of options would otherwise parse in
// quadratic time).
const manyOptions = 16

func (s *Section) optionIndex(name string) int {
	if i, ok := s.optByName[name]; ok && i < len(s.Options) && s.Options[i].Name == name {
		return i
	}
	return s.scanOptions(name)
}

// parsedOptionIndex is optionIndex while parsing, when the index by name
// is complete: a miss needs no scan.
func (s *Section) parsedOptionIndex(name string) int {
	if s.optByName == nil {
		return s.scanOptions(name)
	}
	if i, ok := s.optByName[name]; ok {
		return i
	}
	return -1
}

func (s *Section) scanOptions(name string) int {
	for i, o := range s.Options {
		if o.Name == name {
			return i
		}
	}
	return -1
}

// Option returns the named option, or nil.
func (s *Section) Option(name string) *Option {
	if i := s.optionIndex(name); i >= 0 {
		return s.Options[i]
	}
	return nil
}

// Get returns an option's value; for a list, its last value.
func (s *Section) Get(name string) (string, bool) {
	o := s.Option(name)
	if o == nil || len(o.Values) == 0 {
		return "", false
	}
	return o.Values[len(o.Values)-1], true
}

// GetList returns a list's values, or an option's value as one element;
// nil when absent.
func (s *Section) GetList(name string) []string {
	o := s.Option(name)
	if o == nil {
		return nil
	}
	return append([]string(nil), o.Values...)
}

// Bool reads a UCI boolean the way OpenWrt's scripts do
// (1/0, yes/no, on/off, true/false, enabled/disabled); def when absent.
func (s *Section) Bool(name string, def bool) (bool, error) {
	v, ok := s.Get(name)
	if !ok {
		return def, nil
	}
	switch strings.ToLower(v) {
	case "1", "yes", "on", "true", "enabled":
		return true, nil
	case "0", "no", "off", "false", "disabled":
		return false, nil
	}
	return def, fmt.Errorf("uci: option %q of section %q (%s) is %q, not a boolean: use 1/0, yes/no, on/off, true/false or enabled/disabled",
		name, s.Name, s.Type, v)
}

// appendOption adds an option at the end, keeping the index by name once
// there are many.
func (s *Section) appendOption(o *Option) {
	s.Options = append(s.Options, o)
	switch {
	case s.optByName != nil:
		s.optByName[o.Name] = len(s.Options) - 1
	case len(s.Options) >= manyOptions:
		s.optByName = make(map[string]int, 2*len(s.Options))
		for i, o := range s.Options {
			s.optByName[o.Name] = i
		}
	}
}
