//go:build linux

package conntrack

import (
	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// TupleDump tells how a lean dump went: the entries it read, and those it
// skipped because the kernel's message could not be parsed.
type TupleDump struct {
	Entries   int
	Skipped   int
	FirstSkip error // why the first skipped entry was skipped
}

// EachTuple dumps the whole table and calls fn with each entry's family,
// protocol, original and reply tuples, id, offload and assured bits, as
// Flows reports them; state, counters, timeout and mark are left zero.
// It reads only those attributes, so it is several times cheaper than
// Flows: it is what a cut, which has to look at every entry, uses.
// When fn returns false the rest of the dump is abandoned.
func (c *Client) EachTuple(fn func(netstate.Flow) bool) (TupleDump, error) {
	var d TupleDump
	wd, err := c.walk(dumpQuery{}, tupleVisitor(&d, fn))
	d.Entries = wd.Entries
	if wd.Skipped > 0 {
		d.Skipped += wd.Skipped
		if d.FirstSkip == nil {
			d.FirstSkip = wd.FirstSkip
		}
	}
	return d, err
}

// Tuples is EachTuple collected into a slice.
func (c *Client) Tuples() ([]netstate.Flow, TupleDump, error) {
	var out []netstate.Flow
	d, err := c.EachTuple(func(f netstate.Flow) bool { out = append(out, f); return true })
	return out, d, err
}

// tupleVisitor parses each message of a dump for EachTuple, noting in d
// the entries it cannot parse.
func tupleVisitor(d *TupleDump, fn func(netstate.Flow) bool) func(uint8, []byte) bool {
	return func(_ uint8, attrs []byte) bool {
		f, err := parseEntry(attrs, false)
		if err != nil {
			d.skip(err)
			return true
		}
		return fn(mapFlow(f))
	}
}
