package uci

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: Parse never panics; what parses renders back byte for byte and
// re-parses to the same sections; Set either refuses or leaves a file that
// parses with the new value and everything else as it was.
func FuzzParse(f *testing.F) {
	fixtures, _ := filepath.Glob("testdata/*-*")
	for _, p := range append(fixtures, "testdata/fastpath") {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("config a 'x'; option p '1'\n"))
	f.Add([]byte("c a\\\n x\no v \"a\\\"b\"'c'\\ d # e\n"))
	f.Add([]byte("config a x\r\nlist l 'multi\nline'\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("/etc/config/fuzz", data)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if !bytes.Equal(file.Bytes(), data) {
			t.Fatal("Bytes differs from the input")
		}
		again, err := Parse("/etc/config/fuzz", file.Bytes())
		if err != nil || render(again) != render(file) {
			t.Fatalf("re-parse differs: %v", err)
		}
		if len(file.Sections) == 0 {
			return
		}
		before := render(file)
		for _, value := range []string{"v", "it's\n\"x\""} {
			if err := file.Set("@[-1]", "fuzz_opt", value); err != nil {
				if render(file) != before || !bytes.Equal(file.Bytes(), data) {
					t.Fatal("a refused Set changed the file")
				}
				return
			}
			g, err := Parse("/etc/config/fuzz", file.Bytes())
			if err != nil {
				t.Fatalf("after Set: %v\n%q", err, file.Bytes())
			}
			if v, _ := g.Sections[len(g.Sections)-1].Get("fuzz_opt"); v != value {
				t.Fatalf("after Set the value reads %q", v)
			}
		}
	})
}

// FuzzParseDelta: staged-change files come from other programs; parsing
// them never panics and every change it returns is well formed.
func FuzzParseDelta(f *testing.F) {
	f.Add([]byte("firewall.cfg01e63d.flow_offloading='1'\n-firewall.x\n+firewall.cfg0592bd='rule'\n@firewall.a='b'\n^firewall.a='1'\n|firewall.a.l='x'\n~firewall.a.l='x'\n"))
	f.Add([]byte("firewall.a.b='it'\\''s'\nfirewall.a.b='open\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		changes, _ := ParseDelta("/tmp/.uci/firewall", "firewall", data)
		for _, c := range changes {
			if c.Package != "firewall" || !validName(c.Section) || (c.Option != "" && !validName(c.Option)) || !validText(c.Value) {
				t.Fatalf("malformed change accepted: %+v", c)
			}
			if c.Op != OpRemove && !c.HasValue {
				t.Fatalf("change without value accepted: %+v", c)
			}
		}
	})
}
