package blocklist

import "time"

// A set with flags timeout drops an element by itself once its timeout
// passes (CrowdSec's bans, banIP's log monitor with ban_nftexpiry), and
// the kernel's set GC announces no DELSETELEM for it: notifications
// alone would keep an expired ban listed for ever. So each followed set
// keeps the earliest expiry its elements announced (NFTA_SET_ELEM_
// EXPIRATION of a dump or a NEWSETELEM), and once that has passed the set
// is read again: a dump hides expired elements even before GC frees them
// (nf_tables_dump_setelem skips nft_set_elem_expired ones), so the diff of
// that read drops them, whatever the kernel announced. An element without
// timeout never schedules a read.

const (
	// expirySlack: read a little after the expiry, not at it. The kernel
	// counts in jiffies (10 ms at HZ=100), and the expiry is reckoned
	// from when the message was read, not made.
	expirySlack = 100 * time.Millisecond
	// minReread and rereadShare bound the reads of one set: not more
	// often than once a second, and not more often than rereadShare
	// times its last read took. A read costs the dump and the rebuild of
	// the list, both linear in its elements; on a 128 MB MIPS router a
	// 100,000-element set took some seconds (x86: under one), so it is
	// read at most every minute or two, its reads a twentieth (5%) of
	// one core at worst, while a ban set of a few thousand elements (a
	// few ms) is read within a second of each expiry.
	minReread   = time.Second
	rereadShare = 20
)

// expiry is what a followed set's elements say of when it must be read
// again.
type expiry struct {
	at       time.Time     // the earliest expiry announced; zero: none pending
	readAt   time.Time     // the end of its last full read
	readCost time.Duration // how long that read took
}

// earliestExpiry is the earliest expiry of els, as read at at; zero when
// none of them expires.
func earliestExpiry(els []rawElem, at time.Time) time.Time {
	var s soonest
	for _, e := range els {
		s.add(e)
	}
	return s.at(at)
}

// soonest is the shortest life of the elements added to it, of those
// that expire: a set's earliest expiry, gathered as a dump streams it.
type soonest struct {
	life  time.Duration
	found bool
}

func (s *soonest) add(e rawElem) {
	if life, ok := e.life(); ok && (!s.found || life < s.life) {
		s.life, s.found = life, true
	}
}

// at is the earliest expiry as read at t; zero when none expires.
func (s soonest) at(t time.Time) time.Time {
	if !s.found {
		return time.Time{}
	}
	return t.Add(s.life)
}

// note takes in the elements a notification added at at.
func (e *expiry) note(els []rawElem, at time.Time) {
	if t := earliestExpiry(els, at); !t.IsZero() && (e.at.IsZero() || t.Before(e.at)) {
		e.at = t
	}
}

// loaded records a full read that ran from start to end: what it read
// replaces every earlier expiry.
func (e *expiry) loaded(els []rawElem, start, end time.Time) {
	e.at, e.readAt, e.readCost = earliestExpiry(els, end), end, end.Sub(start)
}

// loadedSoonest is loaded for a read whose elements s gathered.
func (e *expiry) loadedSoonest(s soonest, start, end time.Time) {
	e.at, e.readAt, e.readCost = s.at(end), end, end.Sub(start)
}

// gap is the shortest time between two reads of the set.
func (e expiry) gap() time.Duration {
	return max(minReread, rereadShare*e.readCost)
}

// due is when the set is to be read again; zero: only on a change.
func (e expiry) due() time.Time {
	if e.at.IsZero() {
		return time.Time{}
	}
	t := e.at.Add(expirySlack)
	if earliest := e.readAt.Add(e.gap()); t.Before(earliest) {
		t = earliest
	}
	return t
}
