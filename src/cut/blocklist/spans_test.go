package blocklist

import (
	"fmt"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"math/rand"
	"net/netip"
	"strings"
	"testing"
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

func addr(s string) []byte { return netip.MustParseAddr(s).AsSlice() }

// checkSpans fails unless s is sorted, disjoint and merged.
func checkSpans(t *testing.T, s spans, top u128) {
	t.Helper()
	for i, n := range s {
		if n.hi.less(n.lo) {
			t.Fatalf("span %d upside down: %v", i, s)
		}
		if i > 0 && !s[i-1].hi.inc().less(n.lo) {
			t.Fatalf("spans %d and %d overlap or touch: %v", i-1, i, s)
		}
	}
}

// TestSpansAgainstModel adds and removes random ranges of a small
// address space, and at the top of IPv6, and compares with a bitmap.
func TestSpansAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, base := range []u128{{0, 0}, {^uint64(0), ^uint64(0) - 99}} {
		top := top6
		var s spans
		var model [100]bool
		at := func(i int) u128 { return u128{base.hi, base.lo + uint64(i)} }
		for step := 0; step < 3000; step++ {
			lo := rng.Intn(100)
			hi := lo + rng.Intn(min(8, 100-lo))
			n := span{at(lo), at(hi)}
			add := rng.Intn(2) == 0
			if add {
				s = s.add(n, top)
			} else {
				s = s.remove(n)
			}
			for i := lo; i <= hi; i++ {
				model[i] = add
			}
			checkSpans(t, s, top)
			for i := range model {
				if s.contains(at(i)) != model[i] {
					t.Fatalf("step %d: %d in set = %v, model %v; spans %v", step, i, !model[i], model[i], s)
				}
			}
			// union and subtract agree with add and remove.
			other := spans{{at(rng.Intn(50)), at(50 + rng.Intn(50))}}
			u, d := union(s, other, top), subtract(s, other)
			checkSpans(t, u, top)
			checkSpans(t, d, top)
			for i := range model {
				inOther := other.contains(at(i))
				if u.contains(at(i)) != (model[i] || inOther) || d.contains(at(i)) != (model[i] && !inOther) {
					t.Fatalf("step %d: union/subtract wrong at %d", step, i)
				}
			}
		}
	}
}

func TestPrefixSpan(t *testing.T) {
	for p, want := range map[string]string{
		"10.0.2.0/24": "10.0.2.0/24", "0.0.0.0/0": "0.0.0.0/0", "198.51.100.7/32": "198.51.100.7/32",
		"2001:db8:bad::/48": "2001:db8:bad::/48", "::/0": "::/0", "2001:db8::/63": "2001:db8::/63",
	} {
		n, v6 := prefixSpan(netip.MustParsePrefix(p))
		if got := spanText(n, v6); got != want {
			t.Errorf("prefixSpan(%s) = %s", p, got)
		}
	}
	n, _ := prefixSpan(netip.MustParsePrefix("10.0.0.0/8"))
	if spanText(span{n.lo, n.hi.dec()}, false) != "10.0.0.0-10.255.255.254" {
		t.Errorf("range text %s", spanText(span{n.lo, n.hi.dec()}, false))
	}
}

// TestLoadIntervalDump: a full read of an interval set (starts, exclusive
// ends, the rbtree's leading end marker, in whatever order) lists exactly
// its intervals.
func TestLoadIntervalDump(t *testing.T) {
	l := newListState(cutList("banip"))
	_, problems := l.load([]rawElem{
		{Key: addr("198.51.100.8"), IntervalEnd: true},
		{Key: addr("203.0.113.0")},
		{Key: addr("198.51.100.7")},
		{Key: addr("203.0.114.0"), IntervalEnd: true},
		{Key: addr("0.0.0.0"), IntervalEnd: true},
		{Key: addr("2001:db8:bad::")},
		{Key: addr("2001:db8:bad:1::"), IntervalEnd: true},
		{Key: []byte{1, 2, 3}},
	}, true)
	if len(problems) != 1 {
		t.Errorf("problems %q, want the 3-byte key", problems)
	}
	want := map[string]bool{"198.51.100.7": true, "198.51.100.8": false, "198.51.100.6": false, "203.0.113.0": true,
		"203.0.113.255": true, "203.0.114.0": false, "0.0.0.0": false, "2001:db8:bad::1": true, "2001:db8:bad:1::": false}
	for a, in := range want {
		if l.cover.has(netip.MustParseAddr(a)) != in {
			t.Errorf("%s listed = %v, want %v", a, !in, in)
		}
	}
	if l.countNow() != 3 {
		t.Errorf("entries %d, want 3 intervals", l.countNow())
	}
	// Open-ended: the last interval of the space has no end element.
	l.load([]rawElem{{Key: addr("255.255.255.0")}, {Key: addr("1.0.0.0"), IntervalEnd: true}}, true)
	if !l.cover.has(netip.MustParseAddr("255.255.255.255")) || l.cover.has(netip.MustParseAddr("254.0.0.0")) {
		t.Errorf("open-ended interval: %v", l.cover.v4)
	}
	// Pipapo-style elements carry an inclusive end key.
	l.load([]rawElem{{Key: addr("10.0.0.0"), KeyEnd: addr("10.0.1.255")}}, true)
	if fmt.Sprint(spanText(l.cover.v4[0], false)) != "10.0.0.0/23" || len(l.cover.v4) != 1 {
		t.Errorf("key-end element: %v", l.cover.v4)
	}
}

// TestIntervalNotifications: a CIDR arrives as two notifications, start
// and end, in either order; once the transaction commits exactly the CIDR
// is listed, and deleting it (two more) lists nothing.
func TestIntervalNotifications(t *testing.T) {
	for _, endFirst := range []bool{false, true} {
		l := newListState(cutList("banip"))
		l.load(nil, true)
		start, end := []rawElem{{Key: addr("10.0.2.0")}}, []rawElem{{Key: addr("10.0.3.0"), IntervalEnd: true}}
		if endFirst {
			start, end = end, start
		}
		l.queue(start, true)
		l.queue(end, true)
		d := l.commit()
		for a, in := range map[string]bool{"10.0.2.0": true, "10.0.2.2": true, "10.0.2.255": true, "10.0.3.0": false, "10.0.1.255": false} {
			if l.cover.has(netip.MustParseAddr(a)) != in || d.added.has(netip.MustParseAddr(a)) != in {
				t.Errorf("end first %v: %s listed %v (added %v), want %v", endFirst, a, l.cover.has(netip.MustParseAddr(a)), d.added.has(netip.MustParseAddr(a)), in)
			}
		}
		if d.removed || l.countNow() != 1 {
			t.Errorf("add: removed %v, entries %d", d.removed, l.countNow())
		}
		// auto-merge: nft deletes 10.0.2.0/24 and adds 10.0.2.0-10.0.3.255
		// when 10.0.3.0/24 joins it.
		l.queue([]rawElem{{Key: addr("10.0.2.0")}, {Key: addr("10.0.3.0"), IntervalEnd: true}}, false)
		l.queue([]rawElem{{Key: addr("10.0.2.0")}, {Key: addr("10.0.4.0"), IntervalEnd: true}}, true)
		d = l.commit()
		if d.removed || !l.cover.has(netip.MustParseAddr("10.0.3.9")) || l.cover.len() != 1 || l.countNow() != 1 {
			t.Errorf("merge: removed %v, cover %v, entries %d", d.removed, l.cover.v4, l.countNow())
		}
		l.queue([]rawElem{{Key: addr("10.0.4.0"), IntervalEnd: true}}, false)
		l.queue([]rawElem{{Key: addr("10.0.2.0")}}, false)
		d = l.commit()
		if !d.removed || !l.cover.empty() || l.countNow() != 0 {
			t.Errorf("delete: removed %v, cover %v, entries %d", d.removed, l.cover.v4, l.countNow())
		}
	}
}

// TestReloadInOneTransaction is banIP's reload: the set deleted, created
// again and filled in one transaction. What both hold stays listed all
// along; what only the old one held is reported removed.
func TestReloadInOneTransaction(t *testing.T) {
	l := newListState(cutList("banip"))
	l.load([]rawElem{{Key: addr("10.0.2.0")}, {Key: addr("10.0.3.0"), IntervalEnd: true},
		{Key: addr("192.0.2.7")}, {Key: addr("192.0.2.8"), IntervalEnd: true}}, true)
	l.dropAll(true)
	l.queue([]rawElem{{Key: addr("10.0.2.0")}, {Key: addr("10.0.3.0"), IntervalEnd: true}}, true)
	if !l.cover.has(netip.MustParseAddr("192.0.2.7")) {
		t.Fatal("the old set's content went before the transaction committed")
	}
	d := l.commit()
	if !d.removed || l.cover.has(netip.MustParseAddr("192.0.2.7")) || !l.cover.has(netip.MustParseAddr("10.0.2.2")) {
		t.Errorf("after the reload: removed %v, cover %v", d.removed, l.cover.v4)
	}
	if !d.added.empty() {
		t.Errorf("nothing new was listed, added %v", d.added.v4)
	}
}

// TestIncrementalEqualsBulk replays random transactions of whole
// intervals on an interval set, and of addresses on a plain one, and
// checks that moving only what changed lists what a fresh load of the
// same elements lists.
func TestIncrementalEqualsBulk(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, interval := range []bool{true, false} {
		l := newListState(cutList("x"))
		l.load(nil, interval)
		present := map[uint32]bool{} // interval sets: /28 blocks by number; plain: addresses
		for step := 0; step < 400; step++ {
			for k := rng.Intn(4); k >= 0; k-- {
				b := uint32(rng.Intn(64))
				on := !present[b]
				present[b] = on
				if interval {
					// Touching intervals share an address: an end and a start.
					lo, hi := block(b)
					l.queue([]rawElem{{Key: lo}, {Key: hi, IntervalEnd: true}}, on)
				} else {
					l.queue([]rawElem{{Key: []byte{10, 0, 0, byte(b)}}}, on)
				}
			}
			l.commit()
			var els []rawElem
			for b, on := range present {
				if !on {
					continue
				}
				if interval {
					lo, hi := block(b)
					els = append(els, rawElem{Key: lo}, rawElem{Key: hi, IntervalEnd: true})
				} else {
					els = append(els, rawElem{Key: []byte{10, 0, 0, byte(b)}})
				}
			}
			fresh := newListState(cutList("x"))
			fresh.load(els, interval)
			if fmt.Sprint(fresh.cover) != fmt.Sprint(l.cover) {
				t.Fatalf("interval %v, step %d: incremental %v, fresh load %v", interval, step, l.cover.v4, fresh.cover.v4)
			}
		}
	}
}

// block is the start and exclusive end of the b-th /28 of 10.0.0.0/22.
func block(b uint32) (lo, end []byte) {
	n := 10<<24 | b<<4
	return []byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, []byte{byte((n + 16) >> 24), byte((n + 16) >> 16), byte((n + 16) >> 8), byte(n + 16)}
}

func TestListIndex(t *testing.T) {
	a, b := newListState(cutList("a")), newListState(cutList("b"))
	a.replacePrefixes(prefixes("203.0.113.0/24", "2001:db8:bad::/48"))
	b.replacePrefixes(prefixes("198.51.100.7/32", "203.0.113.9/32"))
	ix := buildIndex(map[string]*listState{"a": a, "b": b})
	for s, want := range map[string]string{
		"203.0.113.9": "blocklist:a 203.0.113.0/24", "198.51.100.7": "blocklist:b 198.51.100.7/32",
		"2001:db8:bad:1::5": "blocklist:a 2001:db8:bad::/48", "::ffff:203.0.113.1": "blocklist:a 203.0.113.0/24",
		"198.51.100.8": "", "2001:db8::1": "",
	} {
		l, ok := ix.lookup(netip.MustParseAddr(s))
		got := ""
		if ok {
			got = l.Trigger + " " + l.what
		}
		if got != want {
			t.Errorf("lookup(%s) = %q, want %q", s, got, want)
		}
	}
	d := b.replacePrefixes(prefixes("192.0.2.0/24"))
	if !d.removed || !d.added.has(netip.MustParseAddr("192.0.2.1")) || d.added.has(netip.MustParseAddr("198.51.100.7")) {
		t.Errorf("replace: %+v", d)
	}
	ix.extend(d.added)
	if _, ok := ix.lookup(netip.MustParseAddr("192.0.2.200")); !ok {
		t.Error("extend did not list 192.0.2.0/24")
	}
}

func TestFlowTable(t *testing.T) {
	ft := &Tracked{}
	fa := func(ss ...string) Addrs {
		var f Addrs
		for _, s := range ss {
			f.a[f.n] = netip.MustParseAddr(s)
			f.n++
		}
		return f
	}
	s := setOfPrefixes(prefixes("10.0.2.0/24"))
	if !ft.AnyIn(s) {
		t.Fatal("an unknown table must say yes")
	}
	ft.Begin()
	ft.Seen(1, fa("10.0.1.2", "10.0.2.2"))
	ft.Event(2, fa("10.0.1.2", "10.0.2.3"), false) // new during the pass
	ft.Event(3, fa("10.0.1.2", "10.0.2.4"), true)  // destroyed, never seen
	ft.End(true)
	ft.Event(1, fa("10.0.1.2", "10.0.2.2"), false) // the same entry again
	if !ft.AnyIn(setOfPrefixes(prefixes("10.0.2.3/32"))) || !ft.AnyIn(setOfPrefixes(prefixes("10.0.2.2/32"))) {
		t.Error("tracked addresses not found")
	}
	ft.Event(1, fa("10.0.1.2", "10.0.2.2"), true)
	if ft.AnyIn(setOfPrefixes(prefixes("10.0.2.2/32"))) || ft.AnyIn(setOfPrefixes(prefixes("10.0.3.0/24", "2001:db8::/32"))) {
		t.Error("an address no connection has is reported")
	}
	if !ft.AnyIn(setOfPrefixes(prefixes("0.0.0.0/0"))) || !ft.AnyIn(s) {
		t.Error("a wide span misses a tracked address")
	}
}

func TestSpanWider(t *testing.T) {
	for _, c := range []struct {
		p    string
		bits int
		want bool
	}{
		{"10.0.0.0/8", 8, false}, {"10.0.0.0/7", 8, true}, {"0.0.0.0/0", 1, true}, {"10.0.0.0/32", 32, false},
		{"2001:db8::/16", 16, false}, {"2000::/3", 16, true}, {"::/0", 1, true}, {"2001:db8::/64", 64, false}, {"2001:db8::/63", 64, true},
	} {
		n, v6 := prefixSpan(netip.MustParsePrefix(c.p))
		width := 32
		if v6 {
			width = 128
		}
		if got := n.wider(c.bits, width); got != c.want {
			t.Errorf("%s wider than /%d = %v, want %v", c.p, c.bits, got, c.want)
		}
	}
	l := newListState(cutList("x"))
	l.minBits = [2]int{8, 16}
	l.replacePrefixes(prefixes("0.0.0.0/0", "2001:db8::/32"))
	ix := buildIndex(map[string]*listState{"x": l})
	if _, ok := ix.lookup(netip.MustParseAddr("192.0.2.1")); ok {
		t.Error("an address listed only by 0.0.0.0/0 counts as listed")
	}
	if _, ok := ix.lookup(netip.MustParseAddr("2001:db8::1")); !ok {
		t.Error("2001:db8::/32 is not wider than /16 and must be cut")
	}
	if w := l.wide(); len(w) != 1 || !strings.Contains(w[0], "0.0.0.0/0 is wider than /8 (fastpath.main.cut_min_prefix4)") {
		t.Errorf("wide: %q", w)
	}
}

func TestBoundElems(t *testing.T) {
	var els []rawElem
	for i := uint32(cut.MaxListEntries + 10); i > 0; i-- { // a dump, highest first: /28s 32 addresses apart
		n := 10<<24 | i<<5
		els = append(els, rawElem{Key: []byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n) + 16}, IntervalEnd: true}, rawElem{Key: []byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}})
	}
	got, problem := boundElems(els, true, "big")
	if len(got) != 2*cut.MaxListEntries || !strings.Contains(problem, "blocklist big: the set has 524308 elements, more than 262144 entries") {
		t.Fatalf("%d elements kept, problem %q", len(got), problem)
	}
	l := newListState(cutList("big"))
	l.load(got, true)
	last := l.cover.v4[len(l.cover.v4)-1]
	if l.countNow() != cut.MaxListEntries || spanText(last, false) != "10.128.0.0/28" {
		t.Errorf("entries %d, last %s: want the lowest %d intervals", l.countNow(), spanText(last, false), cut.MaxListEntries)
	}
	if kept, problem := boundElems(els[:10], true, "small"); len(kept) != 10 || problem != "" {
		t.Errorf("a small set was bounded: %d, %q", len(kept), problem)
	}
}
