package engine

import (
	"fmt"
	"net/netip"
	"testing"
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

func TestRangePrefixes(t *testing.T) {
	cases := []struct {
		lo, hi string
		want   []netip.Prefix
	}{
		{"10.0.0.0", "10.0.0.255", prefixes("10.0.0.0/24")},
		{"10.0.0.7", "10.0.0.7", prefixes("10.0.0.7/32")},
		{"10.0.0.1", "10.0.0.6", prefixes("10.0.0.1/32", "10.0.0.2/31", "10.0.0.4/31", "10.0.0.6/32")},
		{"0.0.0.0", "255.255.255.255", prefixes("0.0.0.0/0")},
		{"2001:db8::", "2001:db8::ffff", prefixes("2001:db8::/112")},
		{"10.0.0.5", "10.0.0.4", nil},
	}
	for _, c := range cases {
		got := rangePrefixes(netip.MustParseAddr(c.lo), netip.MustParseAddr(c.hi))
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("rangePrefixes(%s, %s) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
}

func TestElemPrefixes(t *testing.T) {
	a := func(s string) []byte { return netip.MustParseAddr(s).AsSlice() }
	// nft add element inet t s { 203.0.113.0/24, 198.51.100.7 } in a
	// "flags interval" set: starts, and exclusive ends flagged INTERVAL_END,
	// in whatever order the kernel dumps them.
	interval := []rawElem{
		{Key: a("198.51.100.8"), IntervalEnd: true},
		{Key: a("203.0.113.0")},
		{Key: a("198.51.100.7")},
		{Key: a("203.0.114.0"), IntervalEnd: true},
		{Key: a("0.0.0.0"), IntervalEnd: true}, // the rbtree's leading end marker
	}
	got, problems := elemPrefixes(interval)
	if fmt.Sprint(got) != fmt.Sprint(prefixes("198.51.100.7/32", "203.0.113.0/24")) || len(problems) != 0 {
		t.Errorf("interval set: %v %v", got, problems)
	}
	plain := []rawElem{{Key: a("192.0.2.1")}, {Key: a("2001:db8::1")}, {Key: []byte{1, 2, 3}}}
	got, problems = elemPrefixes(plain)
	if fmt.Sprint(got) != fmt.Sprint(prefixes("192.0.2.1/32", "2001:db8::1/128")) || len(problems) != 1 {
		t.Errorf("plain set: %v %v", got, problems)
	}
	withEnd := []rawElem{{Key: a("10.0.0.0"), KeyEnd: a("10.0.1.255")}}
	got, _ = elemPrefixes(withEnd)
	if fmt.Sprint(got) != fmt.Sprint(prefixes("10.0.0.0/23")) {
		t.Errorf("key-end set: %v", got)
	}
	open := []rawElem{{Key: a("255.255.255.0")}, {Key: a("1.0.0.0"), IntervalEnd: true}}
	got, _ = elemPrefixes(open)
	if fmt.Sprint(got) != fmt.Sprint(prefixes("255.255.255.0/24")) {
		t.Errorf("open-ended interval: %v", got)
	}
}

func TestPrefixIndex(t *testing.T) {
	l := newListState(cutList("banip"))
	l.replace(prefixes("203.0.113.0/24", "2001:db8:bad::/48", "198.51.100.7/32"))
	ix := buildIndex(map[string]*listState{"banip": l})
	for addr, want := range map[string]string{
		"203.0.113.9": "203.0.113.0/24", "198.51.100.7": "198.51.100.7/32",
		"2001:db8:bad:1::5": "2001:db8:bad::/48", "::ffff:203.0.113.1": "203.0.113.0/24",
		"198.51.100.8": "", "2001:db8::1": "",
	} {
		p, trig, ok := ix.lookup(netip.MustParseAddr(addr))
		if want == "" {
			if ok {
				t.Errorf("lookup(%s) = %v, want none", addr, p)
			}
			continue
		}
		if !ok || p.String() != want || trig != "blocklist:banip" {
			t.Errorf("lookup(%s) = %v %q %v, want %s", addr, p, trig, ok, want)
		}
	}
	added := l.replace(prefixes("203.0.113.0/24", "192.0.2.0/24"))
	if fmt.Sprint(added) != "[192.0.2.0/24]" || len(l.prefixes) != 2 {
		t.Errorf("replace added %v, has %v", added, l.prefixes)
	}
}

func FuzzElemPrefixes(f *testing.F) {
	f.Add([]byte{10, 0, 0, 0}, []byte{10, 0, 1, 0}, true)
	f.Add([]byte{0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, []byte{}, false)
	f.Fuzz(func(t *testing.T, k1, k2 []byte, end bool) {
		got, _ := elemPrefixes([]rawElem{{Key: k1}, {Key: k2, IntervalEnd: end}, {Key: k1, KeyEnd: k2}})
		if len(got) > 3*2*128 {
			t.Fatalf("%d prefixes from three elements", len(got))
		}
		for _, p := range got {
			if !p.IsValid() || p != p.Masked() {
				t.Fatalf("bad prefix %v", p)
			}
		}
	})
}
