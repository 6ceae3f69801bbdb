//go:build !linux

package conntrack

import (
	"context"
	"errors"
	"net/netip"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

var errNotLinux = errors.New("conntrack: only available on Linux")

// Client talks to the kernel's conntrack table; only on Linux.
type Client struct{}

// Open fails: conntrack is a Linux facility.
func Open() (*Client, error) { return nil, errNotLinux }

func (c *Client) Close() error                                           { return errNotLinux }
func (c *Client) Flows(Filter) ([]netstate.Flow, error)                  { return nil, errNotLinux }
func (c *Client) Select(Filter, int) ([]netstate.Flow, int, error)       { return nil, 0, errNotLinux }
func (c *Client) Entries(Filter, int) ([]netstate.Entry, int, error)     { return nil, 0, errNotLinux }
func (c *Client) FlowsWithAddress(netip.Prefix) ([]netstate.Flow, error) { return nil, errNotLinux }
func (c *Client) Counts() (netstate.FlowCounts, error)                   { return netstate.FlowCounts{}, errNotLinux }
func (c *Client) Total() (int, error)                                    { return 0, errNotLinux }
func (c *Client) Delete(netstate.Flow) error                             { return errNotLinux }
func (c *Client) Events(context.Context, func(Event)) error              { return errNotLinux }

// Subscription is an open conntrack event socket; only on Linux.
type Subscription struct{}

func (c *Client) Subscribe() (*Subscription, error)            { return nil, errNotLinux }
func (s *Subscription) Run(context.Context, func(Event)) error { return errNotLinux }

// TupleDump tells how a lean dump went; only on Linux.
type TupleDump struct {
	Entries   int
	Skipped   int
	FirstSkip error
}

func (c *Client) EachTuple(func(netstate.Flow) bool) (TupleDump, error) {
	return TupleDump{}, errNotLinux
}
func (c *Client) Tuples() ([]netstate.Flow, TupleDump, error) { return nil, TupleDump{}, errNotLinux }

func (c *Client) DeleteMany(flows []netstate.Flow) []error {
	errs := make([]error, len(flows))
	for i := range errs {
		errs[i] = errNotLinux
	}
	return errs
}
