package uci

import (
	"reflect"
	"strings"
	"testing"
)

// render lists sections the way `uci show` does, one line per value, so a
// table can state what a file means in a few readable lines.
func render(f *File) string {
	var b strings.Builder
	for _, s := range f.Sections {
		b.WriteString(s.Name + "=" + s.Type)
		if s.Anonymous {
			b.WriteString(" (anonymous)")
		}
		b.WriteString("\n")
		for _, o := range s.Options {
			if o.IsList {
				b.WriteString(s.Name + "." + o.Name + "=[" + strings.Join(o.Values, "|") + "]\n")
			} else {
				b.WriteString(s.Name + "." + o.Name + "=" + o.Values[0] + "\n")
			}
		}
	}
	return b.String()
}

func TestParseGrammar(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"unquoted values", "config zone lan\n\toption name lan\n",
			"lan=zone\nlan.name=lan\n"},
		{"single quotes keep blanks, backslashes and double quotes", "config a x\noption v 'b \\c \"d\"'\n",
			"x=a\nx.v=b \\c \"d\"\n"},
		{"double quotes with escapes", "config a x\noption v \"say \\\"hi\\\" \\\\ \\n\"\n",
			"x=a\nx.v=say \"hi\" \\ n\n"},
		{"backslash outside quotes escapes one character", "config a x\noption v a\\ b\\'c\n",
			"x=a\nx.v=a b'c\n"},
		{"adjacent quoted parts concatenate", "config a x\noption v 'a'\"b\"c'd e'\n",
			"x=a\nx.v=abcd e\n"},
		{"quote escaped the way uci export writes it", "config a x\noption v 'it'\\''s'\n",
			"x=a\nx.v=it's\n"},
		{"comments: whole line, trailing, and # inside quotes", "# head\nconfig a x # the section\n  # indented\noption v 'a#b' # trailing\noption w c#d\n",
			"x=a\nx.v=a#b\nx.w=c\n"},
		{"blank lines, tabs and spaces", "\n\n\t config \t a\t x  \n\n\t\toption\tv\t\t'1'\t\n   \n",
			"x=a\nx.v=1\n"},
		{"CRLF line ends", "config a 'x'\r\n\toption v '1'\r\n\toption w 2\r\n\tlist l 'p'\r\n",
			"x=a\nx.v=1\nx.w=2\nx.l=[p]\n"},
		{"multi-line quoted value keeps the newline", "config a x\noption v 'line1\nline2'\noption w 3\n",
			"x=a\nx.v=line1\nline2\nx.w=3\n"},
		{"backslash at end of line joins the next", "config a x\noption v abc\\\ndef\n",
			"x=a\nx.v=abcdef\n"},
		{"abbreviated commands", "c a x\no v 1\nl w 2\nl w 3\n",
			"x=a\nx.v=1\nx.w=[2|3]\n"},
		{"lists keep order", "config a x\nlist p 'lan1'\nlist p 'lan2'\nlist p ''\n",
			"x=a\nx.p=[lan1|lan2|]\n"},
		{"list after option turns it into a list", "config a x\noption p one\nlist p two\n",
			"x=a\nx.p=[one|two]\n"},
		{"option after list replaces it", "config a x\nlist p one\nlist p two\noption p three\n",
			"x=a\nx.p=three\n"},
		// What `uci export` of libuci 66127cd prints for these files: a
		// replaced option keeps its place (uci_set allocates the new one
		// after the old), an option turned list too (uci_add_list), and an
		// empty value changes nothing (the parser's uci_set returns early).
		{"repeated option: the last wins where the first stood", "config a x\noption p 1\noption q 2\noption p 3\n",
			"x=a\nx.p=3\nx.q=2\n"},
		{"an option turned list keeps its place", "config a x\noption p 1\noption q 2\nlist p 3\n",
			"x=a\nx.p=[1|3]\nx.q=2\n"},
		{"a list turned option keeps its place", "config a x\nlist p 1\noption q 2\noption p 3\n",
			"x=a\nx.p=3\nx.q=2\n"},
		{"an empty value keeps the earlier one", "config a x\noption p 1\noption q 2\noption p ''\noption r\nlist p 2\n",
			"x=a\nx.p=[1|2]\nx.q=2\n"},
		{"an empty value keeps a list", "config a x\nlist p 1\noption p \"\"\n",
			"x=a\nx.p=[1]\n"},
		{"a named section reopened merges", "config a x\noption p 1\nconfig b y\nconfig a x\noption q 2\n",
			"x=a\nx.p=1\nx.q=2\ny=b\n"},
		{"empty name means anonymous (5381*33+97 = 0x2b606)", "config a ''\noption p 1\n",
			"cfg01b606=a (anonymous)\ncfg01b606.p=1\n"},
		{"package statement is ignored in a named file", "package firewall\nconfig a x\n",
			"x=a\n"},
		{"';' after a quoted word starts the next statement", "config a 'x'; option p '1'; option q 2\n",
			"x=a\nx.p=1\nx.q=2\n"},
		// libuci overwrites a ';' glued to an unquoted word with the string
		// terminator, so the rest of the line is never seen.
		{"';' glued to an unquoted word ends the line", "config a x\noption p 1; option q 2\n",
			"x=a\nx.p=1\n"},
		{"no final newline", "config a x\n\toption p '1'",
			"x=a\nx.p=1\n"},
		{"empty file", "", ""},
		{"only comments", "# nothing\n\n#config a x\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("/etc/config/test", []byte(tt.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := render(f); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if got := string(f.Bytes()); got != tt.in {
				t.Errorf("Bytes changed the text:\n%q\nwant\n%q", got, tt.in)
			}
		})
	}
}

func TestAnonymousNames(t *testing.T) {
	// Names as `uci show` prints them on stock OpenWrt: the counter counts
	// every section, named or not; the suffix hashes the type only.
	f, err := Parse("/etc/config/t", []byte("config defaults\nconfig zone\n\toption name lan\nconfig zone 'named'\nconfig zone\nconfig forwarding\nconfig rule\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range f.Sections {
		got = append(got, s.Name)
	}
	want := []string{"cfg01e63d", "cfg02dc81", "named", "cfg04dc81", "cfg05ad58", "cfg0692bd"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("names %v, want %v", got, want)
	}
	if autoName(300, "rule") != "cfg12c92bd" {
		t.Errorf("past 255 sections the counter grows to three digits: got %s", autoName(300, "rule"))
	}
}
