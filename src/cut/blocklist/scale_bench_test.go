//go:build linux

package blocklist

import (
	"fmt"
	"math/rand"
	"net/netip"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// Benchmarks at router scale (issue: 65,536 connections, banIP's 138,155
// prefixes): go test -run X -bench . ./src/cut/blocklist

// benchLists is a banIP-sized set of block lists: 138,155 prefixes in 13
// lists (95,493 and 39,535 in the two largest, as banIP's README shows),
// a mix of IPv4 /32, /24, /16 and IPv6 /48.
func benchPrefixes() map[string][]netip.Prefix {
	rng := rand.New(rand.NewSource(13))
	sizes := []int{95493, 39535, 400, 400, 400, 300, 300, 300, 300, 200, 200, 200, 127}
	out := map[string][]netip.Prefix{}
	for i, n := range sizes {
		ps := make([]netip.Prefix, 0, n)
		for j := 0; j < n; j++ {
			r := rng.Intn(100)
			var p netip.Prefix
			switch {
			case r < 75:
				p = netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(1 + rng.Intn(222)), byte(rng.Intn(256)), byte(rng.Intn(256)), byte(rng.Intn(256))}), 32)
			case r < 90:
				p = netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(1 + rng.Intn(222)), byte(rng.Intn(256)), byte(rng.Intn(256)), 0}), 24)
			case r < 92:
				p = netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(1 + rng.Intn(222)), byte(rng.Intn(256)), 0, 0}), 16)
			default:
				var b [16]byte
				b[0], b[1] = 0x20, 0x01
				b[2], b[3], b[4], b[5] = byte(rng.Intn(256)), byte(rng.Intn(256)), byte(rng.Intn(256)), byte(rng.Intn(256))
				p = netip.PrefixFrom(netip.AddrFrom16(b), 48)
			}
			ps = append(ps, p)
		}
		out[fmt.Sprintf("list%02d", i)] = ps
	}
	return out
}

// benchFlows is 65,536 tracked connections as a conntrack pass reports
// them: LAN clients behind NAT to random far ends, one in ten over IPv6.
func benchFlows() []netstate.Flow {
	rng := rand.New(rand.NewSource(65536))
	flows := make([]netstate.Flow, 65536)
	for i := range flows {
		var far, lan, wan string
		if i%10 == 0 {
			far = netip.AddrFrom16([16]byte{0x20, 0x01, byte(rng.Intn(256)), byte(rng.Intn(256)), byte(rng.Intn(256)), byte(rng.Intn(256)), 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(1 + rng.Intn(250))}).String()
			lan = "fd00:1::" + fmt.Sprint(1+rng.Intn(200))
			wan = lan
		} else {
			far = netip.AddrFrom4([4]byte{byte(1 + rng.Intn(222)), byte(rng.Intn(256)), byte(rng.Intn(256)), byte(rng.Intn(256))}).String()
			lan = fmt.Sprintf("192.168.1.%d", 2+rng.Intn(200))
			wan = "203.0.113.1"
		}
		sp, dp := uint16(1024+rng.Intn(60000)), uint16(443)
		flows[i] = netstate.Flow{ID: uint32(i + 1), Proto: "tcp",
			Original: cut.Tuple{Proto: "tcp", Src: lan, Dst: far, SrcPort: sp, DstPort: dp},
			Reply:    cut.Tuple{Proto: "tcp", Src: far, Dst: wan, SrcPort: dp, DstPort: sp}}
	}
	return flows
}

// benchIndex loads the lists, the largest as banIP keeps it: an interval
// set (a start and an end element per prefix).
func benchIndex() (map[string]*listState, *Lists) {
	lists := map[string]*listState{}
	for name, ps := range benchPrefixes() {
		l := newListState(cutList(name))
		if name == "list00" {
			l.load(intervalElems(ps), true)
		} else {
			l.replacePrefixes(ps)
		}
		lists[name] = l
	}
	return lists, newLists(lists)
}

// intervalElems is what the kernel holds for ps in an interval set:
// disjoint intervals (nft refuses overlaps, auto-merge joins them).
func intervalElems(ps []netip.Prefix) []rawElem {
	var els []rawElem
	s := setOfPrefixes(ps)
	for f, ss := range []spans{s.v4, s.v6} {
		v6 := f == 1
		for _, n := range ss {
			els = append(els, rawElem{Key: numAddr(n.lo, v6).AsSlice()})
			if n.hi != familyTop(v6) {
				els = append(els, rawElem{Key: numAddr(n.hi.inc(), v6).AsSlice(), IntervalEnd: true})
			}
		}
	}
	return els
}

// BenchmarkMatchPass: one pass of 65,536 flows against 138,155 prefixes,
// as a conntrack pass does it: each flow's addresses read, noted in the
// table of tracked addresses, and looked up.
func BenchmarkMatchPass(b *testing.B) {
	_, ix := benchIndex()
	flows := benchFlows()
	ft := &Tracked{}
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuPerOp(b)()
	hits := 0
	for i := 0; i < b.N; i++ {
		hits = 0
		ft.Begin()
		for _, f := range flows {
			fa := AddrsOf(f)
			ft.Seen(f.ID, fa)
			if _, ok := ix.Listed(fa, nil); ok {
				hits++
			}
		}
		ft.End(true)
	}
	b.ReportMetric(float64(hits), "hits/pass")
}

// BenchmarkMatchOnly is the pass without the table of tracked addresses.
func BenchmarkMatchOnly(b *testing.B) {
	_, ix := benchIndex()
	flows := benchFlows()
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuPerOp(b)()
	for i := 0; i < b.N; i++ {
		for _, f := range flows {
			ix.Listed(AddrsOf(f), nil)
		}
	}
}

// benchTracked is the table of tracked addresses after a pass of
// benchFlows.
func benchTracked() *Tracked {
	ft := &Tracked{}
	ft.Begin()
	for _, f := range benchFlows() {
		ft.Seen(f.ID, AddrsOf(f))
	}
	ft.End(true)
	return ft
}

// BenchmarkAddElement: one element added to the 95,493-prefix interval
// set (its two notifications, the commit, the index extended, the table
// of tracked addresses asked): no pass, since no connection has it.
func BenchmarkAddElement(b *testing.B) {
	lists, ix := benchIndex()
	ft := benchTracked()
	l := lists["list00"]
	rng := rand.New(rand.NewSource(7))
	passes := 0
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuPerOp(b)()
	for i := 0; i < b.N; i++ {
		a := netip.AddrFrom4([4]byte{byte(1 + rng.Intn(222)), byte(rng.Intn(256)), byte(rng.Intn(256)), byte(rng.Intn(256))})
		l.queue([]rawElem{{Key: a.AsSlice()}}, true)
		l.queue([]rawElem{{Key: a.Next().AsSlice(), IntervalEnd: true}}, true)
		d := l.commit()
		ix.index.extend(d.added)
		if ft.AnyIn(d.added) {
			passes++
		}
	}
	b.ReportMetric(float64(passes)/float64(b.N), "passes/op")
}

// BenchmarkAddBurst: 1,000 elements added to the 95,493-prefix interval
// set in one transaction (2,000 notifications), as a list update brings
// them: one commit, one extension of the index, one question to the table.
func BenchmarkAddBurst(b *testing.B) {
	lists, ix := benchIndex()
	ft := benchTracked()
	l := lists["list00"]
	rng := rand.New(rand.NewSource(8))
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuPerOp(b)()
	for i := 0; i < b.N; i++ {
		for k := 0; k < 1000; k++ {
			a := netip.AddrFrom4([4]byte{byte(1 + rng.Intn(222)), byte(rng.Intn(256)), byte(rng.Intn(256)), byte(rng.Intn(256))})
			l.queue([]rawElem{{Key: a.AsSlice()}}, true)
			l.queue([]rawElem{{Key: a.Next().AsSlice(), IntervalEnd: true}}, true)
		}
		d := l.commit()
		ix.index.extend(d.added)
		ft.AnyIn(d.added)
	}
}
