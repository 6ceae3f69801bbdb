package uci

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// Set gives a section's option one value, changing the text minimally: the
// value token of the option's line is rewritten in place, a list becomes one
// option line (its other lines go), and a missing option gets a new line
// after the section's last one, indented like its neighbours. No section is
// created, moved or renamed, so anonymous names (and staged changes that
// use them) stay valid. Sections returned before stay valid and see the new
// value.
func (f *File) Set(addr, option, value string) error {
	sec, err := f.Section(addr)
	if err != nil {
		return err
	}
	if !validName(option) {
		return fmt.Errorf("uci: invalid option name %q: use letters, digits and _ only", option)
	}
	if value == "" {
		return fmt.Errorf("uci: empty value for %s.%s.%s: written to the file it would change nothing (libuci keeps the earlier value), and this writer does not delete options; give a value",
			f.Package, sec.Name, option)
	}
	if strings.IndexByte(value, 0) >= 0 {
		return fmt.Errorf("uci: value for %s.%s.%s contains a NUL byte, which a config file cannot hold", f.Package, sec.Name, option)
	}
	if o := sec.Option(option); o != nil && !o.IsList && o.Values[0] == value {
		return nil
	}
	edits, err := f.planSet(sec, option, value)
	if err != nil {
		return err
	}
	return f.applyEdits(edits, sec, option, value)
}

func (f *File) planSet(sec *Section, option, value string) ([]edit, error) {
	last := -1 // last statement of the section naming the option
	for _, i := range sec.stmts {
		st := f.stmts[i]
		if (st.kind == 'o' || st.kind == 'l') && st.args[0].val == option {
			last = i
		}
	}
	if sec.Option(option) != nil && last >= 0 {
		st := f.stmts[last]
		if st.kind == 'o' {
			v := st.args[1]
			return []edit{{v.start, v.end, quote(value)}}, nil
		}
		// A list: its last line becomes the option (which overrides every
		// earlier line), and list lines standing alone on their line go.
		edits := []edit{{st.start, st.end, "option " + option + " " + quote(value)}}
		for _, i := range sec.stmts {
			o := f.stmts[i]
			if i == last || o.kind != 'l' || o.args[0].val != option {
				continue
			}
			if ls, le, alone := f.lineOfStatement(o); alone {
				edits = append(edits, edit{ls, le, ""})
			}
		}
		return edits, nil
	}

	st := f.stmts[sec.stmts[len(sec.stmts)-1]]
	_, le, alone := f.lineOfStatement(st)
	if !alone {
		return nil, fmt.Errorf("uci: %s:%d holds more than one statement, so option %q cannot be added to section %q after it: put each statement on its own line",
			f.Name, st.line, option, sec.Name)
	}
	indent := "\t"
	for _, i := range sec.stmts {
		if o := f.stmts[i]; o.kind == 'o' || o.kind == 'l' {
			ls := bytes.LastIndexByte(f.src[:o.start], '\n') + 1
			if w := f.src[ls:o.start]; len(bytes.Trim(w, " \t")) == 0 {
				indent = string(w)
			}
		}
	}
	line := indent + "option " + option + " " + quote(value)
	eol := "\n"
	if le >= 2 && f.src[le-1] == '\n' && f.src[le-2] == '\r' {
		eol = "\r\n"
	}
	if le == 0 || f.src[le-1] != '\n' {
		return []edit{{le, le, eol + line}}, nil // the file has no final newline; keep it so
	}
	return []edit{{le, le, line + eol}}, nil
}

// lineOfStatement returns the span of the whole lines a statement occupies
// (newline included) and whether nothing but blanks and a trailing comment
// share them.
func (f *File) lineOfStatement(st statement) (start, end int, alone bool) {
	start = bytes.LastIndexByte(f.src[:st.start], '\n') + 1
	end = len(f.src)
	if i := bytes.IndexByte(f.src[st.end:], '\n'); i >= 0 {
		end = st.end + i + 1
	}
	before := f.src[start:st.start]
	after := bytes.TrimLeft(f.src[st.end:end], " \t\r\n")
	alone = len(bytes.Trim(before, " \t")) == 0 && (len(after) == 0 || after[0] == '#')
	return start, end, alone
}

// applyEdits re-parses the edited text and adopts it only if it means what
// was asked: the one option changed and everything else as before.
func (f *File) applyEdits(edits []edit, sec *Section, option, value string) error {
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	src := append([]byte(nil), f.src...)
	for _, e := range edits {
		src = append(src[:e.start], append([]byte(e.text), src[e.end:]...)...)
	}
	nf, err := Parse(f.Name, src)
	if err != nil {
		return fmt.Errorf("uci: setting %s.%s.%s would make the file unreadable (%v); file left unchanged", f.Package, sec.Name, option, err)
	}
	if err := sameExcept(f, nf, sec.Name, option, value); err != nil {
		return fmt.Errorf("uci: setting %s.%s.%s: %v; file left unchanged", f.Package, sec.Name, option, err)
	}
	f.src = nf.src
	f.stmts = nf.stmts
	for i, s := range f.Sections {
		*s = *nf.Sections[i]
	}
	return nil
}

// sameExcept checks that b is a with only section.option = value changed.
func sameExcept(a, b *File, section, option, value string) error {
	if len(a.Sections) != len(b.Sections) {
		return fmt.Errorf("the edit changed the number of sections")
	}
	for i, sa := range a.Sections {
		sb := b.Sections[i]
		if sa.Name != sb.Name || sa.Type != sb.Type || sa.Anonymous != sb.Anonymous {
			return fmt.Errorf("the edit changed section %q", sa.Name)
		}
		want := map[string]*Option{}
		for _, o := range sa.Options {
			want[o.Name] = o
		}
		if sa.Name == section {
			want[option] = &Option{Name: option, Values: []string{value}}
		}
		if len(want) != len(sb.Options) {
			return fmt.Errorf("the edit changed the options of section %q", sa.Name)
		}
		for _, o := range sb.Options {
			w := want[o.Name]
			if w == nil || w.IsList != o.IsList || strings.Join(w.Values, "\x00") != strings.Join(o.Values, "\x00") || len(w.Values) != len(o.Values) {
				return fmt.Errorf("the edit changed option %q of section %q", o.Name, sa.Name)
			}
		}
	}
	return nil
}

// quote writes a value as uci export does: in single quotes, a quote inside
// as '\”.
func quote(v string) string {
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}
