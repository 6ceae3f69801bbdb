package uci

import (
	"os"
	"strings"
	"testing"
)

func mustSet(t *testing.T, f *File, addr, option, value string) {
	t.Helper()
	if err := f.Set(addr, option, value); err != nil {
		t.Fatalf("Set(%s, %s, %q): %v", addr, option, value, err)
	}
}

// replaceOnce is the expected text: the input with exactly one change.
func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if strings.Count(s, old) < 1 {
		t.Fatalf("fixture has no %q", old)
	}
	return strings.Replace(s, old, new, 1)
}

func TestSetAddsOptionAfterTheSectionsLastLine(t *testing.T) {
	data, _ := os.ReadFile("testdata/firewall-23.05-rom")
	f := parseFixture(t, "firewall-23.05-rom")
	mustSet(t, f, "@defaults[0]", "flow_offloading", "1")
	mustSet(t, f, "@defaults[0]", "flow_offloading_hw", "1")
	// After the last option, before the comment that follows the section;
	// indented with the section's own tab.
	want := replaceOnce(t, string(data), "\toption forward\t\tREJECT\n# Uncomment",
		"\toption forward\t\tREJECT\n\toption flow_offloading '1'\n\toption flow_offloading_hw '1'\n# Uncomment")
	if got := string(f.Bytes()); got != want {
		t.Errorf("got\n%s", got)
	}
	s, _ := f.Section("cfg01e63d")
	if v, _ := s.Get("flow_offloading_hw"); v != "1" {
		t.Errorf("flow_offloading_hw = %q", v)
	}
}

func TestSetRewritesOnlyTheValueToken(t *testing.T) {
	data, _ := os.ReadFile("testdata/firewall-24.10-committed")
	f := parseFixture(t, "firewall-24.10-committed")
	defaults, _ := f.Section("@defaults[0]")
	mustSet(t, f, "@defaults[0]", "flow_offloading_hw", "0")
	want := replaceOnce(t, string(data), "option flow_offloading_hw '1'", "option flow_offloading_hw '0'")
	if got := string(f.Bytes()); got != want {
		t.Errorf("got\n%s", got)
	}
	// A section looked up before the change sees it.
	if v, _ := defaults.Get("flow_offloading_hw"); v != "0" {
		t.Errorf("section held from before reads %q", v)
	}

	rom, _ := os.ReadFile("testdata/firewall-23.05-rom")
	g := parseFixture(t, "firewall-23.05-rom")
	mustSet(t, g, "@zone[1]", "masq", "0") // an unquoted value, tabs kept
	want = replaceOnce(t, string(rom), "\toption masq\t\t1\n", "\toption masq\t\t'0'\n")
	if got := string(g.Bytes()); got != want {
		t.Errorf("got\n%s", got)
	}
}

func TestSetSameValueChangesNothing(t *testing.T) {
	data, _ := os.ReadFile("testdata/firewall-23.05-rom")
	f := parseFixture(t, "firewall-23.05-rom")
	mustSet(t, f, "@defaults[0]", "syn_flood", "1")
	if string(f.Bytes()) != string(data) {
		t.Error("setting the value an option already has rewrote the file")
	}
}

func TestSetListBecomesOption(t *testing.T) {
	data, _ := os.ReadFile("testdata/firewall-23.05-rom")
	f := parseFixture(t, "firewall-23.05-rom")
	mustSet(t, f, "@zone[1]", "network", "wan")
	want := replaceOnce(t, string(data), "\tlist   network\t\t'wan'\n\tlist   network\t\t'wan6'\n", "\toption network 'wan'\n")
	if got := string(f.Bytes()); got != want {
		t.Errorf("got\n%s", got)
	}
	z, _ := f.Section("@zone[1]")
	if o := z.Option("network"); o == nil || o.IsList || o.Values[0] != "wan" {
		t.Errorf("network is %+v", o)
	}
}

func TestSetKeepsLineEndsAndMissingFinalNewline(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"CRLF", "config a 'x'\r\n\toption p '1'\r\n\r\nconfig b 'y'\r\n",
			"config a 'x'\r\n\toption p '1'\r\n\toption q 'v'\r\n\r\nconfig b 'y'\r\n"},
		{"no final newline", "config a 'x'\n  option p '1'",
			"config a 'x'\n  option p '1'\n  option q 'v'"},
		{"section without options, spaces as indent elsewhere", "config a 'x' # note\nconfig b 'y'\n",
			"config a 'x' # note\n\toption q 'v'\nconfig b 'y'\n"},
		{"reopened section: after its last block", "config a 'x'\n\toption p 1\nconfig b 'y'\nconfig a 'x'\n\toption r 2\n# end\n",
			"config a 'x'\n\toption p 1\nconfig b 'y'\nconfig a 'x'\n\toption r 2\n\toption q 'v'\n# end\n"},
		{"last statement has no value (a delete)", "config a 'x'\n\toption p 1\n\toption p\nconfig b 'y'\n",
			"config a 'x'\n\toption p 1\n\toption p\n\toption q 'v'\nconfig b 'y'\n"},
		{"multi-line value before", "config a 'x'\n\toption p 'l1\nl2'\n\nconfig b 'y'\n",
			"config a 'x'\n\toption p 'l1\nl2'\n\toption q 'v'\n\nconfig b 'y'\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("/etc/config/t", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			mustSet(t, f, "x", "q", "v")
			if got := string(f.Bytes()); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestSetQuotesAnyValue(t *testing.T) {
	f, _ := Parse("/etc/config/t", []byte("config a 'x'\n\toption p '1'\n"))
	for _, v := range []string{`it's "quoted" \ # ; $x`, "two\nlines", "'", "trailing\\", " spaced "} {
		mustSet(t, f, "x", "p", v)
		g, err := Parse("/etc/config/t", f.Bytes())
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if got, _ := g.Sections[0].Get("p"); got != v {
			t.Errorf("wrote %q, read back %q", v, got)
		}
	}
}

func TestSetKeepsAnonymousNames(t *testing.T) {
	f := parseFixture(t, "firewall-24.10-committed")
	before := render(f)
	mustSet(t, f, "@zone[-1]", "mtu_fix", "1")
	after := render(f)
	if !strings.HasPrefix(after, strings.Split(before, "cfg11dc81=zone")[0]) {
		t.Error("sections before the changed one changed")
	}
	if strings.Count(before, "=") != strings.Count(after, "=")-1 {
		t.Errorf("expected exactly one more value:\n%s", after)
	}
	if !strings.Contains(after, "cfg11dc81.mtu_fix=1\n") {
		t.Errorf("missing the new option:\n%s", after)
	}
}

func TestSetErrors(t *testing.T) {
	f, _ := Parse("/etc/config/t", []byte("config a 'x'; option p '1'\nconfig a 'y'\n\toption p 1\n"))
	before := string(f.Bytes())
	tests := []struct{ addr, option, value, want string }{
		{"z", "p", "1", `no section "z"`},
		{"y", "bad-name", "1", `invalid option name "bad-name"`},
		{"y", "p", "", "empty value"},
		{"x", "q", "1", "/etc/config/t:1 holds more than one statement"},
	}
	for _, tt := range tests {
		err := f.Set(tt.addr, tt.option, tt.value)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Set(%s,%s,%q): got %v, want %q", tt.addr, tt.option, tt.value, err, tt.want)
		}
	}
	if string(f.Bytes()) != before {
		t.Error("a failed Set changed the text")
	}
	mustSet(t, f, "x", "p", "2") // an in-place value edit works on a shared line
	if !strings.HasPrefix(string(f.Bytes()), "config a 'x'; option p '2'\n") {
		t.Errorf("got %q", f.Bytes())
	}
}

// `uci set` replaces an option where it stands, so Set rewrites the first
// statement that gave it its value and drops the later ones: rewriting the
// last (and dropping the first) would move the option behind the others,
// which libuci shows, and LuCI lists, in a new order.
func TestSetKeepsTheOptionWhereItStands(t *testing.T) {
	qp, pq := "lan=zone\nlan.q=x\nlan.p=wan\n", "lan=zone\nlan.p=wan\nlan.q=x\n"
	tests := []struct{ name, in, want, reads string }{
		{"list before another option", "config zone 'lan'\n\tlist q ''\n\toption p wan\n\tlist q ACCEPT\n",
			"config zone 'lan'\n\toption q 'x'\n\toption p wan\n", qp},
		{"option repeated", "config zone 'lan'\n\toption q 1\n\toption p wan\n\toption q 2 # later\n",
			"config zone 'lan'\n\toption q 'x'\n\toption p wan\n", qp},
		{"an empty value gives no place", "config zone 'lan'\n\toption q ''\n\toption p wan\n\toption q 2\n",
			"config zone 'lan'\n\toption q ''\n\toption p wan\n\toption q 'x'\n", pq},
		{"a later line that cannot go: the last takes the value", "config zone 'lan'\n\toption q 1\n\toption p wan\n\tlist q '2'; list q '3'\n",
			"config zone 'lan'\n\toption q 1\n\toption p wan\n\tlist q '2'; option q 'x'\n", qp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("/etc/config/t", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			mustSet(t, f, "lan", "q", "x")
			if got := string(f.Bytes()); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
			if got := render(f); got != tt.reads {
				t.Errorf("reads as\n%s", got)
			}
		})
	}
}
