package uci

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// ChangeOp is the kind of one staged change, after its delta-line prefix.
type ChangeOp string

// The operations of libuci's delta files (delta.c, uci_command_char).
const (
	OpSet     ChangeOp = "set"      // pkg.section.option='value' or pkg.section='type' (no prefix)
	OpAdd     ChangeOp = "add"      // +pkg.section='type': a new anonymous section
	OpRemove  ChangeOp = "remove"   // -pkg.section[.option][='list index']
	OpRename  ChangeOp = "rename"   // @pkg.section[.option]='newname'
	OpReorder ChangeOp = "reorder"  // ^pkg.section='position'
	OpListAdd ChangeOp = "list-add" // |pkg.section.option='value'
	OpListDel ChangeOp = "list-del" // ~pkg.section.option='value'
)

var opPrefix = map[byte]ChangeOp{'+': OpAdd, '-': OpRemove, '@': OpRename, '^': OpReorder, '|': OpListAdd, '~': OpListDel}

// Change is one staged, not yet committed change, as LuCI or `uci set`
// wrote it to /tmp/.uci/<package>.
type Change struct {
	Op       ChangeOp
	Package  string
	Section  string // a name; anonymous sections by their cfgXXYYYY name
	Option   string // empty for a change to the section itself
	Value    string
	HasValue bool   // false only for a remove without '='
	File     string // delta file it was read from
	Line     int    // line in that file
}

// Touches reports whether the change affects section.option: it names that
// option, or removes the whole section.
func (c Change) Touches(section, option string) bool {
	if c.Section != section {
		return false
	}
	return c.Option == option || (c.Option == "" && (c.Op == OpRemove || c.Op == OpRename))
}

// String renders the change as a delta line, the way `uci changes` shows it.
func (c Change) String() string {
	var b strings.Builder
	for p, op := range opPrefix {
		if op == c.Op {
			b.WriteByte(p)
		}
	}
	b.WriteString(c.Package + "." + c.Section)
	if c.Option != "" {
		b.WriteString("." + c.Option)
	}
	if c.HasValue {
		b.WriteString("=" + quote(c.Value))
	}
	return b.String()
}

// StagedPaths lists the files that may hold package pkg's staged changes
// under root: /tmp/.uci/pkg, where the uci command stages them, and one
// /var/run/rpcd/uci-<session>/pkg per LuCI session, where rpcd stages what
// LuCI lists as unsaved changes (/var/run is /tmp/run on OpenWrt).
func StagedPaths(root, pkg string) []string {
	paths := []string{filepath.Join(root, "tmp", ".uci", pkg)}
	seen := map[string]bool{}
	for _, dir := range []string{filepath.Join(root, "var", "run", "rpcd"), filepath.Join(root, "tmp", "run", "rpcd")} {
		matches, _ := filepath.Glob(filepath.Join(dir, "uci-*", pkg))
		sort.Strings(matches)
		for _, m := range matches {
			real, err := filepath.EvalSymlinks(m)
			if err != nil || seen[real] {
				continue
			}
			seen[real] = true
			paths = append(paths, m)
		}
	}
	return paths
}

// Staged reads the changes staged for package pkg (see StagedPaths); no
// file means no changes. Like libuci, which skips a delta line it cannot
// parse and applies the rest, it returns every good change even when some
// lines are bad; the bad ones are reported in the error (*ParseError each,
// joined).
func Staged(root, pkg string) ([]Change, error) {
	var all []Change
	var errs []error
	for _, path := range StagedPaths(root, pkg) {
		data, err := readFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("uci: %w", err)
		}
		changes, err := ParseDelta(path, pkg, data)
		all = append(all, changes...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return all, errors.Join(errs...)
}

// ParseDelta parses the text of a delta file of package pkg; see Staged.
// A line is what libuci's uci_parse_delta reads as one change: a value in
// quotes may hold line breaks, so one change can span several lines.
func ParseDelta(name, pkg string, data []byte) ([]Change, error) {
	if len(data) > MaxFileSize {
		return nil, &ParseError{File: name, Msg: fmt.Sprintf("staged changes file is %d bytes, over the %s limit", len(data), sizeText(MaxFileSize)),
			Fix: "revert them with `uci revert " + pkg + "`"}
	}
	var changes []Change
	var bad []error
	s := &scanner{file: name, in: data}
	for s.next < len(s.in) {
		start := s.next
		c, msg := parseDeltaLine(s, pkg)
		if msg == "" && bytes.IndexByte(s.in[start:s.next], 0) >= 0 {
			msg = "NUL byte in the line"
		}
		switch {
		case msg == "blank":
			continue
		case msg != "":
			bad = append(bad, &ParseError{File: name, Line: s.first, Msg: msg,
				Fix: "this staged change is ignored, as uci ignores it; revert it with `uci revert " + pkg + "` or fix the line"})
			continue
		}
		c.File, c.Line = name, s.first
		changes = append(changes, c)
	}
	return changes, errors.Join(bad...)
}

// parseDeltaLine is libuci's uci_parse_delta_tuple + uci_parse_ptr: the
// line is one shell-quoted word, prefix + package.section[.option][=value].
func parseDeltaLine(s *scanner, pkg string) (c Change, msg string) {
	defer func() {
		if r := recover(); r != nil {
			pf, ok := r.(parseFailure)
			if !ok {
				panic(r)
			}
			msg = pf.err.Msg
		}
	}()
	s.pos = 0
	s.getln(0)
	if len(bytes.TrimSpace(s.buf)) == 0 {
		return c, "blank" // libuci fails on it too, silently
	}
	arg := s.nextArg(argName{"staged change", ""}).val
	// uci_parse_delta_tuple: past the one character that ended the word,
	// nothing may follow, not even a blank or the \n of a \r\n
	if rest := s.buf[min(s.pos, len(s.buf)):]; len(rest) > 0 && rest[0] != 0 {
		if len(bytes.TrimSpace(rest)) == 0 {
			return c, "trailing blank or carriage return after the change"
		}
		return c, "more than one word on the line"
	}
	c.Op = OpSet
	if len(arg) > 0 {
		if op, ok := opPrefix[arg[0]]; ok {
			c.Op = op
			arg = arg[1:]
		}
	}
	if i := strings.IndexByte(arg, '='); i >= 0 {
		c.Value, c.HasValue = arg[i+1:], true
		arg = arg[:i]
	}
	parts := strings.Split(arg, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return c, fmt.Sprintf("%q is not package.section[.option]", arg)
	}
	c.Package, c.Section = parts[0], parts[1]
	if len(parts) == 3 {
		c.Option = parts[2]
	}
	switch {
	case c.Package != pkg:
		return c, fmt.Sprintf("change for package %q in the delta of %q", c.Package, pkg)
	case !validName(c.Section):
		return c, fmt.Sprintf("invalid section name %q", c.Section)
	case len(parts) == 3 && !validName(c.Option):
		return c, fmt.Sprintf("invalid option name %q", c.Option)
	case c.HasValue && !validText(c.Value):
		return c, "value holds a control character"
	case c.Op != OpRemove && !c.HasValue:
		return c, "change without a value"
	case c.Op == OpReorder && c.Option != "":
		return c, "reorder of an option"
	case c.Op == OpRename && !validName(c.Value):
		return c, fmt.Sprintf("rename to invalid name %q", c.Value)
	case (c.Op == OpListAdd || c.Op == OpListDel) && c.Option == "":
		return c, "list change without an option"
	}
	return c, ""
}

// validText is uci_validate_text: no control characters but tab, line
// feed and carriage return.
func validText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 32 && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}
