package daemon

import (
	"sync"
	"time"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// How often conntrack's offloaded entries are counted for status. The
// total is the kernel's own counter (one message), but no kernel counts
// entries by status bit or flows in a flowtable: the offloaded counts
// take a dump in which the kernel encodes every offloaded entry (65,536
// of them: 200-260 ms on a fast x86, seconds on a router). So a count is
// kept and made again only once it is older than countDuty times what
// the last one took (at most 1/countDuty of the time goes to counting,
// however big the table and slow the machine), in the background while
// answers give the kept one with its age. A count that costs at most
// syncCountCost is made while the caller waits, and so is one for the
// first call after maxCountAge without any (nobody looked for a minute).
const (
	countDuty     = 100
	syncCountCost = 5 * time.Millisecond
	maxCountAge   = time.Minute
)

// tableCounter is what counts conntrack's entries: conntrack.Client.
type tableCounter interface {
	Total() (int, error)
	Counts() (netstate.FlowCounts, error)
}

// offloadCounts gives status conntrack's counts at a cost that does not
// grow with the offloaded entries: see countDuty.
type offloadCounts struct {
	ct  tableCounter
	now func() time.Time

	mu      sync.Mutex
	last    netstate.FlowCounts // the last count
	at      time.Time           // when it began; zero: none yet
	cost    time.Duration       // what it took
	running bool                // a count runs in the background
	asked   time.Time           // the last call
}

func newOffloadCounts(ct tableCounter) *offloadCounts {
	return &offloadCounts{ct: ct, now: time.Now}
}

// Total is the kernel's counter.
func (c *offloadCounts) Total() (int, error) { return c.ct.Total() }

// Counts is the total now and the offloaded counts of the last count,
// OffloadedAge saying how old they are.
func (c *offloadCounts) Counts() (netstate.FlowCounts, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	age := now.Sub(c.at)
	due := age >= c.cost*countDuty
	idle := now.Sub(c.asked) >= maxCountAge
	c.asked = now
	switch {
	case c.running: // its count comes soon
	case c.at.IsZero() || idle && age >= maxCountAge || due && c.cost <= syncCountCost:
		return c.countLocked()
	case due:
		c.running = true
		go c.recount()
	}
	total, err := c.ct.Total()
	if err != nil {
		return netstate.FlowCounts{}, err
	}
	n := c.last
	n.Total = total
	// The table may have shrunk since: never more offloaded than there are.
	n.Offloaded, n.HWOffloaded = min(n.Offloaded, total), min(n.HWOffloaded, total)
	n.OffloadedAge = age.Round(time.Millisecond).Seconds()
	return n, nil
}

// countLocked counts now; the caller holds c.mu.
func (c *offloadCounts) countLocked() (netstate.FlowCounts, error) {
	t := c.now()
	n, err := c.ct.Counts()
	if err != nil {
		return n, err
	}
	c.last, c.at, c.cost = n, t, c.now().Sub(t)
	return n, nil
}

func (c *offloadCounts) recount() {
	t := c.now()
	n, err := c.ct.Counts()
	cost := c.now().Sub(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running = false
	if err == nil && t.After(c.at) {
		c.last, c.at, c.cost = n, t, cost
	}
}
