package uci

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func parseFixture(t *testing.T, name string) *File {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatalf("fixture missing: create testdata/%s (%v)", name, err)
	}
	f, err := Parse("/etc/config/"+strings.SplitN(name, "-", 2)[0], data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSectionAddressing(t *testing.T) {
	f := parseFixture(t, "firewall-24.10-committed")
	tests := []struct{ addr, name, typ string }{
		{"@defaults[0]", "cfg01e63d", "defaults"},
		{"@zone[0]", "cfg02dc81", "zone"},
		{"@zone[1]", "cfg03dc81", "zone"},
		{"@zone[-1]", "cfg11dc81", "zone"},
		{"@zone[-3]", "cfg02dc81", "zone"},
		{"@forwarding[0]", "cfg04ad58", "forwarding"},
		{"@rule[0]", "cfg0592bd", "rule"},
		{"@include[1]", "bcp38", "include"},
		{"@[0]", "cfg01e63d", "defaults"},
		{"@[-1]", "cfg12ad58", "forwarding"},
		{"bcp38", "bcp38", "include"},
		{"cfg0f3837", "cfg0f3837", "redirect"},
		{"@include[0]", "cfg0eaf89", "include"},
	}
	for _, tt := range tests {
		s, err := f.Section(tt.addr)
		if err != nil {
			t.Errorf("%s: %v", tt.addr, err)
			continue
		}
		if s.Name != tt.name || s.Type != tt.typ {
			t.Errorf("%s = %s (%s), want %s (%s)", tt.addr, s.Name, s.Type, tt.name, tt.typ)
		}
	}
	if n := len(f.SectionsOfType("rule")); n != 9 {
		t.Errorf("%d rules, want 9", n)
	}
}

func TestSectionAddressErrors(t *testing.T) {
	f := parseFixture(t, "firewall-24.10-committed")
	tests := []struct{ addr, want string }{
		{"@zone[3]", `has 3 sections of type "zone", so "@zone[3]" does not exist (not found): use an index from 0 to 2, or -1 for the last`},
		{"@zone[-4]", `"@zone[-4]" does not exist`},
		{"@nat[0]", `no section of type "nat" for "@nat[0]" (not found): add a ` + "`config nat`"},
		{"lan", `/etc/config/firewall has no section "lan" (not found): check the name with ` + "`uci show firewall`"},
		{"@zone[x]", `malformed section address "@zone[x]": write @TYPE[N]`},
		{"@zone[0", `malformed section address "@zone[0"`},
	}
	for _, tt := range tests {
		_, err := f.Section(tt.addr)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want it to contain %q", tt.addr, err, tt.want)
		}
		if strings.Contains(tt.want, "not found") && !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: errors.Is(err, ErrNotFound) is false", tt.addr)
		}
	}
}

func TestGetAndLists(t *testing.T) {
	f := parseFixture(t, "network-24.10-ipip")
	dev, err := f.Section("@device[0]")
	if err != nil {
		t.Fatal(err)
	}
	if got := dev.GetList("ports"); !reflect.DeepEqual(got, []string{"lan1", "lan2", "lan3", "lan4"}) {
		t.Errorf("ports %v", got)
	}
	if v, ok := dev.Get("ports"); !ok || v != "lan4" {
		t.Errorf("Get of a list gives its last value, got %q %v", v, ok)
	}
	if got := dev.GetList("name"); !reflect.DeepEqual(got, []string{"br-lan"}) {
		t.Errorf("GetList of an option gives one element, got %v", got)
	}
	if got := dev.GetList("nothing"); got != nil {
		t.Errorf("GetList of a missing option: %v", got)
	}
	if _, ok := dev.Get("nothing"); ok {
		t.Error("Get of a missing option reports it present")
	}
	tun, _ := f.Section("tun0")
	if v, _ := tun.Get("proto"); v != "ipip" {
		t.Errorf("tun0 proto %q", v)
	}
	if v, _ := tun.Get("tunlink"); v != "wan" {
		t.Errorf("tun0 tunlink %q", v)
	}
}

func TestBool(t *testing.T) {
	f, err := Parse("/etc/config/fastpath", []byte("config fastpath main\n"+
		"option a 1\noption b yes\noption c on\noption d true\noption e enabled\noption f TRUE\n"+
		"option g 0\noption h no\noption i off\noption j false\noption k disabled\noption bad 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := f.Section("main")
	for _, name := range []string{"a", "b", "c", "d", "e", "f"} {
		if v, err := s.Bool(name, false); err != nil || !v {
			t.Errorf("%s: %v %v, want true", name, v, err)
		}
	}
	for _, name := range []string{"g", "h", "i", "j", "k"} {
		if v, err := s.Bool(name, true); err != nil || v {
			t.Errorf("%s: %v %v, want false", name, v, err)
		}
	}
	if v, err := s.Bool("missing", true); err != nil || !v {
		t.Errorf("missing option gives the default, got %v %v", v, err)
	}
	_, err = s.Bool("bad", false)
	want := `option "bad" of section "main" (fastpath) is "2", not a boolean: use 1/0, yes/no, on/off, true/false or enabled/disabled`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}
