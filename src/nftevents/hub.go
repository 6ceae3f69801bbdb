// Package nftevents reads nf_tables' notification group once for the whole
// daemon and hands every message to each subscriber: a banIP load of
// 138,155 elements is received and decoded once, not once per watcher.
package nftevents

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"

	"github.com/mdlayher/netlink"
)

// uapi numbers, spelled out so the package builds on any OS.
const (
	netlinkNetfilter = 12 // NETLINK_NETFILTER
	groupNftables    = 7  // NFNLGRP_NFTABLES
)

// ErrLost ends a subscription whose subscriber missed messages: the
// kernel dropped notifications (ENOBUFS), the subscriber fell behind, or
// the socket went. Re-read the state the events describe and subscribe
// again.
var ErrLost = errors.New("nftables notifications were lost")

// queueLen bounds the batches waiting for one subscriber; one that falls
// further behind loses its subscription instead of stalling the others.
const queueLen = 4096

// Hub is one socket on NFNLGRP_NFTABLES and its subscribers.
type Hub struct {
	netns int // network namespace fd; 0: the caller's

	mu   sync.Mutex
	conn *netlink.Conn // nil while no socket is open
	subs map[*Sub]struct{}
}

// Sub is one subscriber's view: every message the hub reads after
// Subscribe, in order, until the subscription ends.
type Sub struct {
	h    *Hub
	msgs chan []netlink.Message
	mu   sync.Mutex
	err  error
}

// Open makes a hub and opens its socket in network namespace netns (0:
// the caller's), so that subscribers may subscribe before Run reads.
func Open(netns int) (*Hub, error) {
	h := &Hub{netns: netns, subs: map[*Sub]struct{}{}}
	if err := h.open(); err != nil {
		return nil, err
	}
	return h, nil
}

func (h *Hub) open() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn != nil {
		return nil
	}
	c, err := netlink.Dial(netlinkNetfilter, &netlink.Config{NetNS: h.netns})
	if err != nil {
		return fmt.Errorf("nftables notifications: open netlink socket: %w", err)
	}
	// A burst (a list of 100,000 elements loaded) must not overflow it.
	_ = c.SetReadBuffer(8 << 20)
	if err := c.JoinGroup(groupNftables); err != nil {
		c.Close()
		return fmt.Errorf("nftables notifications: join NFNLGRP_NFTABLES: %w", err)
	}
	h.conn = c
	return nil
}

// Run reads the socket until ctx ends (it returns nil then) or the socket
// fails; it opens the socket again when an earlier Run closed it. Lost
// notifications end every subscription with ErrLost and reading goes on.
func (h *Hub) Run(ctx context.Context) error {
	if err := h.open(); err != nil {
		return err
	}
	h.mu.Lock()
	c := h.conn
	h.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	for {
		msgs, err := c.Receive()
		if err != nil {
			if errors.Is(err, syscall.ENOBUFS) {
				h.loseAll(ErrLost)
				continue
			}
			h.mu.Lock()
			h.conn = nil
			h.mu.Unlock()
			c.Close()
			h.loseAll(fmt.Errorf("%w: the socket failed: %v", ErrLost, err))
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("nftables notifications: %w", err)
		}
		h.mu.Lock()
		for s := range h.subs {
			select {
			case s.msgs <- msgs:
			default:
				s.end(fmt.Errorf("%w: the subscriber fell %d batches behind", ErrLost, queueLen))
				delete(h.subs, s)
			}
		}
		h.mu.Unlock()
	}
}

func (h *Hub) loseAll(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		s.end(err)
		delete(h.subs, s)
	}
}

// Subscribe starts a subscription. With no socket open (a failed Run not
// yet restarted) it is over at once, with ErrLost.
func (h *Hub) Subscribe() *Sub {
	s := &Sub{h: h, msgs: make(chan []netlink.Message, queueLen)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn == nil {
		s.end(fmt.Errorf("%w: the socket is not open", ErrLost))
		return s
	}
	h.subs[s] = struct{}{}
	return s
}

// Subscribers is how many subscriptions are running: a watcher that has
// subscribed sees every later change.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Messages delivers the messages, one receive's batch at a time; it is
// closed when the subscription ends (Err says why).
func (s *Sub) Messages() <-chan []netlink.Message { return s.msgs }

// Err is why the subscription ended; nil while it runs or after Close.
func (s *Sub) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the subscription.
func (s *Sub) Close() {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	if _, ok := s.h.subs[s]; ok {
		delete(s.h.subs, s)
		s.end(nil)
	}
}

// end closes the channel once; the caller holds s.h.mu.
func (s *Sub) end(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	close(s.msgs)
}
