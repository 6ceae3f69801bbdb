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
	var first time.Duration
	found := false
	for _, e := range els {
		if life, ok := e.life(); ok && (!found || life < first) {
			first, found = life, true
		}
	}
	if !found {
		return time.Time{}
	}
	return at.Add(first)
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
