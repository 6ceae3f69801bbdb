//go:build linux

package conntrack

import (
	"encoding/binary"
	"fmt"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// Counts returns how many entries the table holds and how many of them
// are offloaded, at a cost that follows the offloaded entries, not the
// table: the total is the kernel's own counter (IPCTNL_MSG_CT_GET_STATS,
// CTA_STATS_GLOBAL_ENTRIES: nf_conntrack_count, what `conntrack -C`
// shows), and the offloaded ones come from a dump the kernel narrows to
// entries with IPS_OFFLOAD (Linux 5.15; older kernels send every entry,
// and the status bit is checked here), of which only the status word is
// read.
func (c *Client) Counts() (netstate.FlowCounts, error) {
	var n netstate.FlowCounts
	entries, statsErr := c.tableEntries()
	q := dumpQuery{statusMask: statusOffload, statusValue: statusOffload}
	if statsErr != nil {
		q = dumpQuery{} // no counter (a kernel before 3.x): count the dump
	}
	d, err := c.walk(q, func(_ uint8, attrs []byte) bool {
		st, ok := statusWord(attrs)
		if ok && st&statusOffload != 0 {
			n.Offloaded++
			if st&statusHWOffload != 0 {
				n.HWOffloaded++
			}
		}
		return true
	})
	if err != nil {
		return n, fmt.Errorf("count offloaded conntrack entries: %w", err)
	}
	if statsErr != nil {
		n.Total = d.Entries
	} else {
		n.Total = entries
	}
	// The counter and the dump are read at two moments; entries that came
	// in between must not make more offloaded entries than there are.
	n.Total = max(n.Total, n.Offloaded)
	return n, nil
}

// Total is the number of entries the table holds, from the kernel's own
// counter alone: the whole of Counts where no entry can be offloaded.
func (c *Client) Total() (int, error) {
	if n, err := c.tableEntries(); err == nil {
		return n, nil
	}
	d, derr := c.walk(dumpQuery{}, func(uint8, []byte) bool { return true })
	if derr != nil {
		return 0, fmt.Errorf("count conntrack entries: %w", derr)
	}
	return d.Entries, nil
}

// statusWord finds CTA_STATUS among an entry's top-level attributes
// without reading the others.
func statusWord(attrs []byte) (uint32, bool) {
	for len(attrs) > 0 {
		typ, val, rest, err := nextAttr(attrs)
		if err != nil {
			return 0, false
		}
		if typ == ctaStatus && len(val) == 4 {
			return binary.BigEndian.Uint32(val), true
		}
		attrs = rest
	}
	return 0, false
}
