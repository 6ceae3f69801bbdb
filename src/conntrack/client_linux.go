//go:build linux

package conntrack

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// Client talks to the kernel's conntrack table over ctnetlink.
type Client struct {
	conn *netlink.Conn // requests with one answer: the counter, single deletes
	raw  *netlink.Conn // batched deletes

	// The lean dump's own socket, so a cut's deletes can run while it reads.
	dumpMu   sync.Mutex
	dumpConn *netlink.Conn // nil after a failed redial: the next dump tries again
	dumpBuf  []byte
	// netns is the network namespace Open ran in: a dump stopped early is
	// abandoned with its socket, and the new socket must be made there.
	netns *os.File
}

// dumpBufSize holds one read of a dump: the kernel fills at most about
// 32 KiB per read.
const dumpBufSize = 64 << 10

// Open connects to ctnetlink in the current network namespace.
func Open() (*Client, error) {
	c, err := netlink.Dial(unix.NETLINK_NETFILTER, nil)
	if err != nil {
		return nil, fmt.Errorf("open ctnetlink (is nf_conntrack_netlink loaded?): %w", err)
	}
	raw, err := netlink.Dial(unix.NETLINK_NETFILTER, nil)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("open ctnetlink: %w", err)
	}
	// A window of batched deletes' acks must fit the socket's buffer: the
	// acks carry no copy of their requests (NETLINK_CAP_ACK).
	_ = raw.SetOption(netlink.CapAcknowledge, true)
	dc, err := netlink.Dial(unix.NETLINK_NETFILTER, nil)
	if err != nil {
		raw.Close()
		c.Close()
		return nil, fmt.Errorf("open ctnetlink: %w", err)
	}
	// Without /proc the daemon's own namespace is the one it runs in.
	ns, _ := os.Open("/proc/thread-self/ns/net")
	return &Client{conn: c, raw: raw, dumpConn: dc, dumpBuf: make([]byte, dumpBufSize), netns: ns}, nil
}

// Close releases the netlink sockets.
func (c *Client) Close() error {
	c.raw.Close()
	c.dumpMu.Lock()
	if c.dumpConn != nil {
		c.dumpConn.Close()
	}
	if c.netns != nil {
		c.netns.Close()
	}
	c.dumpMu.Unlock()
	return c.conn.Close()
}

// redialDump replaces the dump socket, abandoning a dump in progress on
// it: closing a netlink socket ends its dump in the kernel, which encodes
// nothing more of it. The caller holds dumpMu.
func (c *Client) redialDump() error {
	if c.dumpConn != nil {
		c.dumpConn.Close()
		c.dumpConn = nil
	}
	cfg := &netlink.Config{}
	if c.netns != nil {
		cfg.NetNS = int(c.netns.Fd())
	}
	dc, err := netlink.Dial(unix.NETLINK_NETFILTER, cfg)
	if err != nil {
		return fmt.Errorf("open ctnetlink for the next dump: %w", err)
	}
	c.dumpConn = dc
	return nil
}

// Flows returns every entry the filter selects.
func (c *Client) Flows(filter Filter) ([]netstate.Flow, error) {
	flows, _, err := c.Select(filter, -1)
	return flows, err
}

// FlowsWithAddress returns every entry with an end in addr, in the
// original or the reply direction.
func (c *Client) FlowsWithAddress(addr netip.Prefix) ([]netstate.Flow, error) {
	return c.Flows(Filter{Address: addr.Masked()})
}

// Select returns the first limit entries the filter selects (all of them
// when limit < 0) and how many it selects in all. The kernel narrows the
// dump where it can (see selector.queries); every entry that comes back is
// checked here on the few attributes the filter needs, without allocating,
// and only the entries returned are decoded in full. The total of a
// filter costs a check of every further entry the kernel sends (and the
// kernel's encoding of it); the zero filter's total is the kernel's own
// counter, as in Counts, once its dump has reached the limit, where it
// stops.
func (c *Client) Select(filter Filter, limit int) ([]netstate.Flow, int, error) {
	var out []netstate.Flow
	total, err := c.selectEach(filter, limit, func(f *ctFlow) { out = append(out, mapFlow(*f)) })
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// Entries is Select with each entry's status word and helper, which
// explaining a connection's offload reads.
func (c *Client) Entries(filter Filter, limit int) ([]netstate.Entry, int, error) {
	var out []netstate.Entry
	total, err := c.selectEach(filter, limit, func(f *ctFlow) {
		out = append(out, netstate.Entry{Flow: mapFlow(*f), Status: uint32(f.Status), Helper: f.Helper.Name})
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// selectEach hands the first limit entries the filter selects, decoded in
// full, to keep, and counts them all (see Select).
func (c *Client) selectEach(filter Filter, limit int, keep func(*ctFlow)) (int, error) {
	sel, err := filter.selector()
	if err != nil {
		return 0, err
	}
	counted := -1
	if filter == (Filter{}) && limit >= 0 {
		if n, err := c.tableEntries(); err == nil {
			counted = n
		}
	}
	kept, total, stopped := 0, 0, false
	// A kernel that ignores CTA_FILTER (before 5.8) sends the whole table
	// for the first address query: then that dump is the answer.
	whole := false
	for _, q := range sel.queries() {
		if whole {
			break
		}
		_, err := c.walk(q, func(family uint8, attrs []byte) bool {
			f, err := parseEntry(attrs, false)
			if err != nil {
				return true // an entry the kernel sent malformed is not reported
			}
			k := keysOf(family, &f)
			if !sel.matches(&k) {
				return true
			}
			if q.hasAddr && !whole {
				first := int8(netstate.FirstEndIn(&k.addrs, sel.addr))
				if k.addrs[q.addrSlot].Unmap() != q.addr {
					whole = true
				} else if first != q.addrSlot {
					return true // the query of an earlier end reports it
				}
			}
			total++
			if limit >= 0 && kept >= limit && counted >= 0 {
				stopped = true
				return false
			}
			if limit >= 0 && kept >= limit {
				return true
			}
			if full, err := parseEntry(attrs, true); err == nil {
				keep(&full)
				kept++
			}
			return true
		})
		if err != nil {
			return 0, err
		}
	}
	if stopped {
		// Counted at another moment than the dump: never fewer than seen.
		total = max(counted, total)
	}
	return total, nil
}

// keysOf picks what a selector looks at from a parsed entry.
func keysOf(family uint8, f *ctFlow) keys {
	return keys{
		family: family,
		proto:  f.TupleOrig.Proto.Protocol,
		status: uint32(f.Status),
		addrs: [4]netip.Addr{
			f.TupleOrig.IP.SourceAddress, f.TupleOrig.IP.DestinationAddress,
			f.TupleReply.IP.SourceAddress, f.TupleReply.IP.DestinationAddress,
		},
		ports: [4]uint16{
			f.TupleOrig.Proto.SourcePort, f.TupleOrig.Proto.DestinationPort,
			f.TupleReply.Proto.SourcePort, f.TupleReply.Proto.DestinationPort,
		},
	}
}

// Delete removes the entry with f's original tuple. An offloaded entry on
// a kernel before 6.4 gives ErrOffloadedBusy; a missing one os.ErrNotExist.
func (c *Client) Delete(f netstate.Flow) error {
	m, err := deleteMessage(f)
	if err != nil {
		return fmt.Errorf("delete conntrack entry: %w", err)
	}
	_, err = c.conn.Execute(m)
	return mapDeleteError(err, "conntrack entry "+f.Original.String())
}

// tableEntries is the kernel's count of entries (IPCTNL_MSG_CT_GET_STATS,
// CTA_STATS_GLOBAL_ENTRIES: nf_conntrack_count, what `conntrack -C` shows).
func (c *Client) tableEntries() (int, error) {
	msgs, err := c.conn.Execute(netlink.Message{
		Header: netlink.Header{
			Type:  netlink.HeaderType(nfnlSubsysCTNetlink<<8 | ipctnlMsgCTGetStats),
			Flags: netlink.Request | netlink.Dump | netlink.Acknowledge,
		},
		Data: []byte{unix.AF_UNSPEC, 0, 0, 0}, // nfgenmsg
	})
	if err != nil {
		return 0, fmt.Errorf("read conntrack counter: %w", err)
	}
	if len(msgs) == 0 || len(msgs[0].Data) < 4 {
		return 0, errors.New("read conntrack counter: empty answer")
	}
	return statsEntries(msgs[0].Data[4:])
}

// statsEntries reads CTA_STATS_GLOBAL_ENTRIES (big-endian u32) from the
// attributes of the answer to IPCTNL_MSG_CT_GET_STATS; an answer without
// it counts none.
func statsEntries(attrs []byte) (int, error) {
	for len(attrs) > 0 {
		typ, val, rest, err := nextAttr(attrs)
		if err != nil {
			return 0, fmt.Errorf("read conntrack counter: %w", err)
		}
		if typ == ctaStatsGlobalEntries && len(val) == 4 {
			return int(binary.BigEndian.Uint32(val)), nil
		}
		attrs = rest
	}
	return 0, nil
}

// Events calls fn for every new and destroyed connection until ctx ends
// or the socket fails. fn runs on one goroutine, in the kernel's order.
func (c *Client) Events(ctx context.Context, fn func(Event)) error {
	s, err := c.Subscribe()
	if err != nil {
		return err
	}
	return s.Run(ctx, fn)
}

// Subscription is an open socket on conntrack's new and destroy groups.
// Opening it apart from Run lets a caller open it in the network namespace
// it means and read it from any goroutine.
type Subscription struct {
	conn *netlink.Conn
}

// Subscribe joins the new and destroy event groups, on a socket of the
// calling thread's network namespace.
func (c *Client) Subscribe() (*Subscription, error) {
	lc, err := netlink.Dial(unix.NETLINK_NETFILTER, nil)
	if err != nil {
		return nil, fmt.Errorf("open ctnetlink for events: %w", err)
	}
	// A large buffer: a burst of new connections must not overflow it.
	_ = lc.SetReadBuffer(4 << 20)
	for _, g := range []uint32{nfnlgrpCTNew, nfnlgrpCTDestroy} {
		if err := lc.JoinGroup(g); err != nil {
			lc.Close()
			return nil, fmt.Errorf("listen for conntrack events: %w", err)
		}
	}
	return &Subscription{conn: lc}, nil
}

// Run calls fn for each event until ctx ends (then it returns nil) or the
// socket fails. It closes the subscription when it returns.
func (s *Subscription) Run(ctx context.Context, fn func(Event)) error {
	var once sync.Once
	closeConn := func() { once.Do(func() { s.conn.Close() }) }
	defer closeConn()
	// Closing the socket is what ends a read blocked in the kernel.
	stop := context.AfterFunc(ctx, closeConn)
	defer stop()
	for {
		if ctx.Err() != nil {
			return nil
		}
		msgs, err := s.conn.Receive()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("conntrack events: %w", err)
		}
		for _, m := range msgs {
			if ev, ok := decodeEvent(m); ok {
				fn(ev)
			}
		}
	}
}

// decodeEvent turns one message of the event groups into an Event. The
// kernel sends a new entry as IPCTNL_MSG_CT_NEW with NLM_F_CREATE|NLM_F_EXCL,
// a change to one (not reported) as IPCTNL_MSG_CT_NEW without them, and a
// destroyed one as IPCTNL_MSG_CT_DELETE. An entry that does not parse is
// not reported either.
func decodeEvent(m netlink.Message) (Event, bool) {
	typ := uint16(m.Header.Type)
	if typ>>8 != nfnlSubsysCTNetlink || len(m.Data) < 4 {
		return Event{}, false
	}
	var kind string
	switch typ & 0xff {
	case ipctnlMsgCTNew:
		if m.Header.Flags&(netlink.Create|netlink.Excl) == 0 {
			return Event{}, false
		}
		kind = EventNew
	case ipctnlMsgCTDelete:
		kind = EventDestroy
	default:
		return Event{}, false
	}
	f, err := parseEntry(m.Data[4:], true)
	if err != nil {
		return Event{}, false
	}
	return Event{Type: kind, Flow: mapFlow(f)}, true
}
