package platform

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseCompatible(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"tplink,archer-c7-v2\x00qca,qca9558\x00", []string{"tplink,archer-c7-v2", "qca,qca9558"}},
		{"linksys,e8450-ubi\x00mediatek,mt7622", []string{"linksys,e8450-ubi", "mediatek,mt7622"}},
		{"a\x00\x00b\x00 c \n\x00", []string{"a", "b", "c"}},
		{"", nil},
		{"\x00\x00", nil},
	}
	for _, c := range cases {
		if got := ParseCompatible([]byte(c.in)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseCompatible(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzParseCompatible checks entries are never empty, never hold a NUL or
// surrounding space, and that joining them back parses to the same list.
func FuzzParseCompatible(f *testing.F) {
	f.Add([]byte("tplink,archer-c7-v2\x00qca,qca9558\x00"))
	f.Add([]byte("xiaomi,mi-router-ax3000t\x00mediatek,mt7981\x00"))
	f.Add([]byte("\x00 \x00\xff\xfe\x00a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got := ParseCompatible(data)
		for _, c := range got {
			if c == "" || strings.ContainsRune(c, 0) || strings.TrimSpace(c) != c {
				t.Fatalf("bad entry %q in %q", c, got)
			}
		}
		if again := ParseCompatible([]byte(strings.Join(got, "\x00") + "\x00")); !reflect.DeepEqual(again, got) {
			t.Fatalf("round trip changed %q into %q", got, again)
		}
	})
}
