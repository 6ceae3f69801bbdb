//go:build linux

package conntrack

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"

	"github.com/fastpath-wrt/fastpath/src/status"
	"github.com/mdlayher/netlink"
	ct "github.com/ti-mo/conntrack"
	"github.com/ti-mo/netfilter"
	"golang.org/x/sys/unix"
)

// Client talks to the kernel's conntrack table over ctnetlink.
type Client struct {
	conn *ct.Conn
	raw  *netlink.Conn // batched deletes

	// The lean dump's own socket, so a cut's deletes can run while it reads.
	dumpMu   sync.Mutex
	dumpConn *netlink.Conn
	dumpBuf  []byte
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
	dc, err := netlink.Dial(unix.NETLINK_NETFILTER, nil)
	if err != nil {
		raw.Close()
		c.Close()
		return nil, fmt.Errorf("open ctnetlink: %w", err)
	}
	return &Client{conn: c, raw: raw, dumpConn: dc, dumpBuf: make([]byte, dumpBufSize)}, nil
}

// Close releases the netlink sockets.
func (c *Client) Close() error {
	c.raw.Close()
	c.dumpConn.Close()
	return c.conn.Close()
}

// Flows returns the entries the filter selects.
func (c *Client) Flows(filter Filter) ([]status.Flow, error) {
	views, err := c.dump(filter)
	if err != nil {
		return nil, err
	}
	out := make([]status.Flow, 0, len(views))
	for _, v := range views {
		if filter.matches(v) {
			out = append(out, v.Flow)
		}
	}
	return out, nil
}

// FlowsWithAddress returns every entry with an end in addr, in the
// original or the reply direction.
func (c *Client) FlowsWithAddress(addr netip.Prefix) ([]status.Flow, error) {
	return c.Flows(Filter{Address: addr.Masked()})
}

// dump reads the table, asking the kernel to filter by status bits where
// it can (Linux 5.15+) and falling back to a full dump.
func (c *Client) dump(filter Filter) ([]flowView, error) {
	var want ct.Status
	if filter.Offloaded {
		want |= ct.Status(statusOffload)
	}
	if filter.HWOffloaded {
		want |= ct.Status(statusHWOffload)
	}
	var flows []ct.Flow
	var err error
	if want != 0 {
		flows, err = c.conn.DumpFilter(ct.NewFilter().Status(want), nil)
		if err != nil && (errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP)) {
			flows, err = c.conn.Dump(nil) // kernel before 5.15: filter here
		}
	} else {
		flows, err = c.conn.Dump(nil)
	}
	if err != nil {
		return nil, fmt.Errorf("dump conntrack table: %w", err)
	}
	views := make([]flowView, len(flows))
	for i, f := range flows {
		views[i] = mapFlow(f)
	}
	return views, nil
}

// Counts returns how many entries there are and how many are offloaded,
// from one dump: the total needs every entry anyway.
func (c *Client) Counts() (status.FlowCounts, error) {
	var n status.FlowCounts
	all, err := c.dump(Filter{})
	if err != nil {
		return n, err
	}
	n.Total = len(all)
	for _, v := range all {
		if v.Status&statusOffload != 0 {
			n.Offloaded++
		}
		if v.Status&statusHWOffload != 0 {
			n.HWOffloaded++
		}
	}
	return n, nil
}

// Delete removes the entry with f's original tuple. An offloaded entry on
// a kernel before 6.4 gives ErrOffloadedBusy; a missing one os.ErrNotExist.
func (c *Client) Delete(f status.Flow) error {
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
	return mapDeleteError(err, "conntrack entry "+tupleString(f.Original))
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
			fn(Event{Type: kind, Flow: mapFlow(*ev.Flow).Flow})
		}
	}
}
