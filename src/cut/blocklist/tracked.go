package blocklist

import (
	"net/netip"
	"sync"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// Tracked knows the addresses of the connections conntrack tracks now,
// from one full pass and the new and destroy events after it, so an
// address added to a block list costs a conntrack pass only when a
// connection has it. Entries are counted by conntrack id, so an event for
// an entry the pass saw too, or a destroy of one it never saw, changes
// nothing.
type Tracked struct {
	mu  sync.Mutex
	cur *flowCounts // nil until the first pass
	// next is the table a pass under way builds; the events meanwhile are
	// applied to both, so nothing is lost when it takes over.
	next *flowCounts
}

type flowCounts struct {
	ids map[uint32]struct{}
	v4  map[uint32]int32
	v6  map[u128]int32
}

// newFlowCounts makes a table sized like like (nil: empty), so a
// rebuild grows no map.
func newFlowCounts(like *flowCounts) *flowCounts {
	var ids, v4, v6 int
	if like != nil {
		ids, v4, v6 = len(like.ids), len(like.v4), len(like.v6)
	}
	return &flowCounts{ids: make(map[uint32]struct{}, ids), v4: make(map[uint32]int32, v4), v6: make(map[u128]int32, v6)}
}

// Addrs are the distinct addresses of a flow (its two tuples).
type Addrs struct {
	a [4]netip.Addr
	n int
}

// AddrsOf reads the addresses of f, IPv4-mapped ones as IPv4.
func AddrsOf(f netstate.Flow) Addrs {
	var fa Addrs
	for _, a := range netstate.Ends(f.Original, f.Reply) {
		if !a.IsValid() {
			continue
		}
		a = a.Unmap()
		dup := false
		for _, b := range fa.a[:fa.n] {
			dup = dup || b == a
		}
		if !dup {
			fa.a[fa.n] = a
			fa.n++
		}
	}
	return fa
}

func (c *flowCounts) add(id uint32, fa Addrs, by int32) {
	if by > 0 {
		if _, ok := c.ids[id]; ok {
			return
		}
		c.ids[id] = struct{}{}
	} else {
		if _, ok := c.ids[id]; !ok {
			return
		}
		delete(c.ids, id)
	}
	for _, a := range fa.a[:fa.n] {
		n, v6 := addrNum(a)
		if v6 {
			if c.v6[n] += by; c.v6[n] <= 0 {
				delete(c.v6, n)
			}
		} else if c.v4[uint32(n.lo)] += by; c.v4[uint32(n.lo)] <= 0 {
			delete(c.v4, uint32(n.lo))
		}
	}
}

// Event applies a conntrack event of entry id (gone: its destroy).
func (t *Tracked) Event(id uint32, fa Addrs, gone bool) {
	by := int32(1)
	if gone {
		by = -1
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur != nil {
		t.cur.add(id, fa, by)
	}
	if t.next != nil {
		t.next.add(id, fa, by)
	}
}

// Begin starts a rebuild by a full conntrack pass; the pass calls Seen
// for every entry and End once it has read the table to its end.
func (t *Tracked) Begin() {
	t.mu.Lock()
	t.next = newFlowCounts(t.cur)
	t.mu.Unlock()
}

// Seen counts an entry the pass read.
func (t *Tracked) Seen(id uint32, fa Addrs) {
	t.mu.Lock()
	if t.next != nil {
		t.next.add(id, fa, 1)
	}
	t.mu.Unlock()
}

// End makes the rebuilt table current (ok) or drops it (the pass failed).
func (t *Tracked) End(ok bool) {
	t.mu.Lock()
	if ok {
		t.cur = t.next
	}
	t.next = nil
	t.mu.Unlock()
}

// AnyIn reports whether a tracked connection has an address in s; true
// while the table is not known.
func (t *Tracked) AnyIn(s Set) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		return true
	}
	return anyIn4(t.cur.v4, s.v4) || anyIn6(t.cur.v6, s.v6)
}

// anyIn4 looks up the addresses of small spans, or walks the table when
// the spans hold more addresses than it has.
func anyIn4(m map[uint32]int32, ss spans) bool {
	if len(m) == 0 || len(ss) == 0 {
		return false
	}
	budget := uint64(len(m))
	var size uint64
	for _, s := range ss {
		if size += s.hi.lo - s.lo.lo + 1; size > budget {
			for a := range m {
				if ss.contains(u128{0, uint64(a)}) {
					return true
				}
			}
			return false
		}
	}
	for _, s := range ss {
		for a := s.lo.lo; a <= s.hi.lo; a++ {
			if _, ok := m[uint32(a)]; ok {
				return true
			}
		}
	}
	return false
}

func anyIn6(m map[u128]int32, ss spans) bool {
	if len(m) == 0 || len(ss) == 0 {
		return false
	}
	small := len(ss) <= len(m)
	for _, s := range ss {
		if s.hi.hi != s.lo.hi || s.hi.lo-s.lo.lo > 64 {
			small = false
		}
	}
	if small {
		for _, s := range ss {
			for a := s.lo; ; a = a.inc() {
				if _, ok := m[a]; ok {
					return true
				}
				if a == s.hi {
					break
				}
			}
		}
		return false
	}
	for a := range m {
		if ss.contains(a) {
			return true
		}
	}
	return false
}
