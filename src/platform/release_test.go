package platform

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

const release2410 = `DISTRIB_ID='OpenWrt'
DISTRIB_RELEASE='24.10.0'
DISTRIB_REVISION='r28427-6df0e3d02a'
DISTRIB_TARGET='ramips/mt7621'
DISTRIB_ARCH='mipsel_24kc'
DISTRIB_DESCRIPTION='OpenWrt 24.10.0 r28427-6df0e3d02a'
DISTRIB_TAINTS=''
`

func TestParseOpenWrtRelease(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    map[string]string
		wantErr string // substring; "" means no error
	}{
		{name: "release file", in: release2410, want: map[string]string{
			"DISTRIB_ID": "OpenWrt", "DISTRIB_RELEASE": "24.10.0", "DISTRIB_REVISION": "r28427-6df0e3d02a",
			"DISTRIB_TARGET": "ramips/mt7621", "DISTRIB_ARCH": "mipsel_24kc",
			"DISTRIB_DESCRIPTION": "OpenWrt 24.10.0 r28427-6df0e3d02a", "DISTRIB_TAINTS": ""}},
		{name: "double quotes and escapes", in: `A="x \"y\" \$z \\ \q"` + "\n" + `B=plain\ word`,
			want: map[string]string{"A": `x "y" $z \ \q`, "B": "plain word"}},
		{name: "quote concatenation", in: `A='it'"'"'s'` + "\n" + `B='a'b"c"`,
			want: map[string]string{"A": "it's", "B": "abc"}},
		{name: "comments, blanks, export, CRLF", in: "# generated\n\n  export A='1'  # note\r\nB='2'\r\n",
			want: map[string]string{"A": "1", "B": "2"}},
		{name: "bad line is skipped, rest kept", in: "A='1'\nnot an assignment\nB='2'\n",
			want: map[string]string{"A": "1", "B": "2"}, wantErr: "line 2:"},
		{name: "unclosed quote", in: "A='1\nB='2'\n",
			want: map[string]string{"B": "2"}, wantErr: "line 1: A: single quote opened at column 1 is never closed"},
		{name: "unclosed double quote", in: `A="1`, want: map[string]string{}, wantErr: "double quote"},
		{name: "bad name", in: "1A='x'\nA-B='y'\n", want: map[string]string{}, wantErr: "line 1:"},
		{name: "unquoted space", in: "A=two words\n", want: map[string]string{}, wantErr: "quote the whole value"},
		{name: "trailing backslash", in: `A=x\`, want: map[string]string{}, wantErr: "trailing backslash"},
		{name: "empty", in: "", want: map[string]string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseOpenWrtRelease([]byte(c.in))
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("error %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}

// shellQuote writes v the way a shell script would, for the round trip.
func shellQuote(v string) string {
	return "'" + strings.ReplaceAll(v, "'", `'"'"'`) + "'"
}

// FuzzParseOpenWrtRelease checks the parser never panics and that what it
// returns survives being written back and read again unchanged.
func FuzzParseOpenWrtRelease(f *testing.F) {
	f.Add([]byte(release2410))
	f.Add([]byte(`A="x \"y\" \$z"` + "\nB='it'\"'\"'s'\n# c\nexport C=d\\ e\n"))
	f.Add([]byte("A='unclosed\nB=\"also\n\\\n=\n'\n"))
	f.Add([]byte("\x00\xff=\xfe\nA=\x00'\x01'\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		values, _ := ParseOpenWrtRelease(data)
		keys := make([]string, 0, len(values))
		for k := range values {
			if !isShellName(k) {
				t.Fatalf("parsed key %q is not a shell name", k)
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			b.WriteString(k + "=" + shellQuote(values[k]) + "\n")
		}
		again, err := ParseOpenWrtRelease([]byte(b.String()))
		if err != nil {
			t.Fatalf("re-parsing %q: %v", b.String(), err)
		}
		if !reflect.DeepEqual(again, values) {
			t.Fatalf("round trip changed %q into %q", values, again)
		}
	})
}
