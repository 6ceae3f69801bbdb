package cut

import (
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
	got, problems, err := ParseBlocklist(strings.NewReader(in), "/etc/fastpath/blocklist.txt")
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
		got, problems, err := ParseBlocklist(strings.NewReader(in), "f")
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
		if len(got) > lines || len(problems) > lines {
			t.Fatalf("%d entries and %d problems from %d lines", len(got), len(problems), lines)
		}
		for _, p := range got {
			if !p.IsValid() || p != p.Masked() || p.Addr().Is4In6() {
				t.Fatalf("bad prefix %v", p)
			}
		}
	})
}
