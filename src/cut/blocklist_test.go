package cut

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

func TestParseBlocklist(t *testing.T) {
	in := `# banned
198.51.100.7
  203.0.113.0/24   # a whole net
10.1.2.3/8
not-an-address
2001:db8:bad::/48

::ffff:192.0.2.9
1.2.3.4/33
fe80::1%eth0
198.51.100.7
`
	got, problems, err := ParseBlocklist(strings.NewReader(in), ListFile{List: "local", Path: "/etc/fastpath/blocklist.txt", Quote: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"198.51.100.7/32", "203.0.113.0/24", "10.0.0.0/8", "2001:db8:bad::/48", "192.0.2.9/32"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != netip.MustParsePrefix(want[i]) {
			t.Errorf("entry %d = %v, want %v", i, got[i], want[i])
		}
	}
	wantProblems := []string{
		"/etc/fastpath/blocklist.txt:5:",
		"/etc/fastpath/blocklist.txt:9:",
		"/etc/fastpath/blocklist.txt:10:",
	}
	if len(problems) != len(wantProblems) {
		t.Fatalf("problems %q, want lines 5, 9, 10", problems)
	}
	for i, p := range wantProblems {
		if !strings.HasPrefix(problems[i], p) {
			t.Errorf("problem %d = %q, want prefix %q", i, problems[i], p)
		}
	}
}

func TestParseAddresses(t *testing.T) {
	got, problems := ParseAddresses([]string{"198.51.100.7", "2001:db8:bad::/48", "x"}, "blocklist manual")
	if len(got) != 2 || len(problems) != 1 || !strings.Contains(problems[0], "#3") {
		t.Errorf("got %v, problems %q", got, problems)
	}
}

func FuzzParseBlocklist(f *testing.F) {
	f.Add("198.51.100.7\n# c\n\n203.0.113.0/24\n")
	f.Add("::ffff:1.2.3.4/120\nfe80::1%eth0\n")
	f.Add("1.2.3.4/33\n\x00\xff")
	f.Fuzz(func(t *testing.T, in string) {
		got, problems, err := ParseBlocklist(strings.NewReader(in), ListFile{List: "f", Path: "f", Quote: true})
		if err != nil {
			return // over-long line: reported, not lost silently
		}
		lines := 0
		for _, l := range strings.Split(in, "\n") {
			if i := strings.IndexByte(l, '#'); i >= 0 {
				l = l[:i]
			}
			if strings.TrimSpace(l) != "" {
				lines++
			}
		}
		if len(got) > lines || len(problems) > lines+1 {
			t.Fatalf("%d entries and %d problems from %d lines", len(got), len(problems), lines)
		}
		for _, p := range got {
			if !p.IsValid() || p != p.Masked() || p.Addr().Is4In6() {
				t.Fatalf("bad prefix %v", p)
			}
		}
	})
}

// TestParseBlocklistBounds: a line over 1 MiB is reported with its number
// and the lines after it are kept; more than MaxListEntries entries keeps
// the first ones and names the list and the bound; problems beyond
// MaxListProblems are counted, not listed.
func TestParseBlocklistBounds(t *testing.T) {
	in := "192.0.2.1\n" + strings.Repeat("x", MaxLineBytes+10) + "\n192.0.2.3\r\n192.0.2.4"
	got, problems, err := ParseBlocklist(strings.NewReader(in), ListFile{List: "big", Path: "/tmp/l", Quote: true})
	if err != nil || len(got) != 3 || len(problems) != 1 || !strings.HasPrefix(problems[0], "/tmp/l:2: line longer than 1048576 bytes") {
		t.Fatalf("long line: %v %q %v", got, problems, err)
	}
	var b strings.Builder
	for i := 0; i < MaxListEntries+5; i++ {
		fmt.Fprintf(&b, "10.%d.%d.%d\n", i>>16, i>>8&255, i&255)
	}
	got, problems, _ = ParseBlocklist(strings.NewReader(b.String()), ListFile{List: "big", Path: "/tmp/l"})
	if len(got) != MaxListEntries || len(problems) != 1 || !strings.Contains(problems[0], "blocklist big: more than 262144 entries") || !strings.Contains(problems[0], "line 262145") {
		t.Errorf("too many entries: %d kept, %q", len(got), problems)
	}
	got, problems, _ = ParseBlocklist(strings.NewReader(strings.Repeat("secret\n", 150)+"192.0.2.9\n"), ListFile{List: "s", Path: "/root/f"})
	if len(got) != 1 || len(problems) != MaxListProblems+1 || !strings.Contains(problems[MaxListProblems], "50 more problems") {
		t.Errorf("many problems: %d kept, %d problems, last %q", len(got), len(problems), problems[len(problems)-1])
	}
	for _, p := range problems {
		if strings.Contains(p, "secret") {
			t.Fatalf("a file not everyone may read was quoted: %q", p)
		}
	}
}
