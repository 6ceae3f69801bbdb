package uci

import (
	"errors"
	"strings"
	"testing"
)

func TestParseDelta(t *testing.T) {
	// As libuci's uci_save writes them: values single-quoted, a quote as '\''.
	in := "firewall.cfg01e63d.flow_offloading='1'\n" +
		"-firewall.cfg01e63d.flow_offloading_hw\n" +
		"+firewall.cfg1592bd='rule'\n" +
		"firewall.cfg1592bd.name='Block it'\"'\"'s host'\n" +
		"|firewall.cfg02dc81.network='guest'\n" +
		"~firewall.cfg03dc81.network='wan6'\n" +
		"@firewall.cfg04ad58='lan_wan'\n" +
		"^firewall.cfg1592bd='0'\n" +
		"firewall.guest='zone'\n" +
		"-firewall.cfg0592bd\n" +
		"\n"
	got, err := ParseDelta("/tmp/.uci/firewall", "firewall", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{Op: OpSet, Package: "firewall", Section: "cfg01e63d", Option: "flow_offloading", Value: "1", HasValue: true, Line: 1, File: "/tmp/.uci/firewall"},
		{Op: OpRemove, Package: "firewall", Section: "cfg01e63d", Option: "flow_offloading_hw", Line: 2, File: "/tmp/.uci/firewall"},
		{Op: OpAdd, Package: "firewall", Section: "cfg1592bd", Value: "rule", HasValue: true, Line: 3, File: "/tmp/.uci/firewall"},
		{Op: OpSet, Package: "firewall", Section: "cfg1592bd", Option: "name", Value: "Block it's host", HasValue: true, Line: 4, File: "/tmp/.uci/firewall"},
		{Op: OpListAdd, Package: "firewall", Section: "cfg02dc81", Option: "network", Value: "guest", HasValue: true, Line: 5, File: "/tmp/.uci/firewall"},
		{Op: OpListDel, Package: "firewall", Section: "cfg03dc81", Option: "network", Value: "wan6", HasValue: true, Line: 6, File: "/tmp/.uci/firewall"},
		{Op: OpRename, Package: "firewall", Section: "cfg04ad58", Value: "lan_wan", HasValue: true, Line: 7, File: "/tmp/.uci/firewall"},
		{Op: OpReorder, Package: "firewall", Section: "cfg1592bd", Value: "0", HasValue: true, Line: 8, File: "/tmp/.uci/firewall"},
		{Op: OpSet, Package: "firewall", Section: "guest", Value: "zone", HasValue: true, Line: 9, File: "/tmp/.uci/firewall"},
		{Op: OpRemove, Package: "firewall", Section: "cfg0592bd", Line: 10, File: "/tmp/.uci/firewall"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d changes, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %+v\nwant %+v", i+1, got[i], want[i])
		}
	}
	if s := got[3].String(); s != `firewall.cfg1592bd.name='Block it'\''s host'` {
		t.Errorf("String() = %s", s)
	}
	if s := got[1].String(); s != "-firewall.cfg01e63d.flow_offloading_hw" {
		t.Errorf("String() = %s", s)
	}
}

func TestParseDeltaKeepsGoodLinesAndReportsBadOnes(t *testing.T) {
	in := "firewall.cfg01e63d.input='ACCEPT'\n" +
		"network.lan.proto='dhcp'\n" + // another package
		"firewall.@zone[0].input='DROP'\n" + // extended addressing is not allowed in deltas
		"firewall.cfg01e63d.a.b='1'\n" +
		"firewall.cfg01e63d.forward\n" + // a set without value
		"@firewall.cfg01e63d='bad-name'\n" +
		"firewall.cfg01e63d.output='ACCEPT' extra\n" +
		"firewall.cfg01e63d.output='DROP'\n"
	got, err := ParseDelta("/tmp/.uci/firewall", "firewall", []byte(in))
	if len(got) != 2 || got[0].Option != "input" || got[1].Value != "DROP" || got[1].Line != 8 {
		t.Errorf("good changes: %+v", got)
	}
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || pe.File != "/tmp/.uci/firewall" {
		t.Fatalf("got %v, want a *ParseError for line 2 first", err)
	}
	for _, w := range []string{":2: change for package \"network\"", ":3: invalid section name \"@zone[0]\"", ":4: ", ":5: change without a value",
		":6: rename to invalid name", ":7: more than one word", "uci revert firewall"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
}

func TestChangeTouches(t *testing.T) {
	tests := []struct {
		c    Change
		want bool
	}{
		{Change{Op: OpSet, Section: "cfg01e63d", Option: "flow_offloading"}, true},
		{Change{Op: OpRemove, Section: "cfg01e63d", Option: "flow_offloading"}, true},
		{Change{Op: OpRemove, Section: "cfg01e63d"}, true},
		{Change{Op: OpRename, Section: "cfg01e63d"}, true},
		{Change{Op: OpSet, Section: "cfg01e63d", Option: "flow_offloading_hw"}, false},
		{Change{Op: OpSet, Section: "cfg02dc81", Option: "flow_offloading"}, false},
		{Change{Op: OpReorder, Section: "cfg01e63d", Value: "3"}, false},
	}
	for _, tt := range tests {
		if got := tt.c.Touches("cfg01e63d", "flow_offloading"); got != tt.want {
			t.Errorf("%+v: %v, want %v", tt.c, got, tt.want)
		}
	}
}

// What libuci 66127cd reads from each line (`uci changes` of this file):
// a value may hold line breaks and carriage returns (uci_validate_text
// allows them, and a quoted value goes on on the next line), but nothing may
// follow the change, not a blank, not the \r of a CRLF line end: uci ignores
// such a line, so a change there is no pending change.
func TestParseDeltaAsLibuciReadsIt(t *testing.T) {
	in := "fpt.x.a='1'\n" +
		"fpt.x.b='2' \n" +
		"fpt.x.c='3'\r\n" +
		"fpt.x.d='l1\nl2'\n" +
		"fpt.x.e='c\rr'\n" +
		"fpt.x.f=v#c\n" +
		"  fpt.x.g=7\n" +
		"fpt.x.h='8'\t\n" +
		"fpt.x.i='9'"
	got, err := ParseDelta("/tmp/.uci/fpt", "fpt", []byte(in))
	want := []struct {
		option, value string
		line          int
	}{{"a", "1", 1}, {"d", "l1\nl2", 4}, {"e", "c\rr", 6}, {"f", "v", 7}, {"g", "7", 8}, {"i", "9", 10}}
	if len(got) != len(want) {
		t.Fatalf("got %d changes, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Option != w.option || got[i].Value != w.value || got[i].Line != w.line {
			t.Errorf("change %d: got %s.%s=%q on line %d, want %s=%q on line %d",
				i, got[i].Section, got[i].Option, got[i].Value, got[i].Line, w.option, w.value, w.line)
		}
	}
	for _, w := range []string{":2: trailing blank or carriage return", ":3: trailing blank or carriage return", ":9: trailing blank"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
}
