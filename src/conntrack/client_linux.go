//go:build linux

package conntrack

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"sync"

	"github.com/mdlayher/netlink"
	ct "github.com/ti-mo/conntrack"
	"github.com/ti-mo/netfilter"
	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// Client talks to the kernel's conntrack table over ctnetlink.
type Client struct {
	conn *ct.Conn
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
	c, err := ct.Dial(nil)
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
	total, err := c.selectEach(filter, limit, func(f *ct.Flow) { out = append(out, mapFlow(*f)) })
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// Entries is Select with each entry's status word and helper, which
// explaining a connection's offload reads.
func (c *Client) Entries(filter Filter, limit int) ([]netstate.Entry, int, error) {
	var out []netstate.Entry
	total, err := c.selectEach(filter, limit, func(f *ct.Flow) {
		out = append(out, netstate.Entry{Flow: mapFlow(*f), Status: uint32(f.Status), Helper: f.Helper.Name})
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// selectEach hands the first limit entries the filter selects, decoded in
// full, to keep, and counts them all (see Select).
func (c *Client) selectEach(filter Filter, limit int, keep func(*ct.Flow)) (int, error) {
	sel, err := filter.selector()
	if err != nil {
		return 0, err
	}
	counted := -1
	if filter == (Filter{}) && limit >= 0 {
		if g, err := c.conn.StatsGlobal(); err == nil {
			counted = int(g.Entries)
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
func keysOf(family uint8, f *ct.Flow) keys {
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
	orig, err := kernelTuple(f.Original)
	if err != nil {
		return fmt.Errorf("delete conntrack entry: %w", err)
	}
	// The kernel looks the entry up by the original tuple; the reply tuple
	// is sent only because the library picks the message's address family
	// from both.
	reply, rerr := kernelTuple(f.Reply)
	if rerr != nil || reply.IP.SourceAddress.Is4() != orig.IP.SourceAddress.Is4() {
		reply = orig
		reply.IP.SourceAddress, reply.IP.DestinationAddress = orig.IP.DestinationAddress, orig.IP.SourceAddress
		reply.Proto.SourcePort, reply.Proto.DestinationPort = orig.Proto.DestinationPort, orig.Proto.SourcePort
	}
	err = c.conn.Delete(ct.Flow{TupleOrig: orig, TupleReply: reply})
	return mapDeleteError(err, "conntrack entry "+f.Original.String())
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
	conn *ct.Conn
	evs  chan ct.Event
	errs chan error
}

// Subscribe joins the new and destroy event groups.
func (c *Client) Subscribe() (*Subscription, error) {
	lc, err := ct.Dial(nil)
	if err != nil {
		return nil, fmt.Errorf("open ctnetlink for events: %w", err)
	}
	// A large buffer: a burst of new connections must not overflow it.
	_ = lc.SetReadBuffer(4 << 20)
	evs := make(chan ct.Event, 1024)
	errs, err := lc.Listen(evs, 1, []netfilter.NetlinkGroup{netfilter.GroupCTNew, netfilter.GroupCTDestroy})
	if err != nil {
		lc.Close()
		return nil, fmt.Errorf("listen for conntrack events: %w", err)
	}
	return &Subscription{conn: lc, evs: evs, errs: errs}, nil
}

// Run calls fn for each event until ctx ends (then it returns nil) or the
// socket fails. It closes the subscription when it returns.
func (s *Subscription) Run(ctx context.Context, fn func(Event)) error {
	defer s.conn.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-s.errs:
			return fmt.Errorf("conntrack events: %w", err)
		case ev := <-s.evs:
			if ev.Flow == nil {
				continue
			}
			var kind string
			switch ev.Type {
			case ct.EventNew:
				kind = EventNew
			case ct.EventDestroy:
				kind = EventDestroy
			default:
				continue
			}
			fn(Event{Type: kind, Flow: mapFlow(*ev.Flow)})
		}
	}
}
