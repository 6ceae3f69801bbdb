//go:build linux

package engine

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/google/nftables"
	"golang.org/x/sys/unix"
)

// element is one set element as the kernel reports it.
type element struct {
	tuple   cut.Tuple
	expires float64 // seconds
	packets uint64  // of the set element: two per frame
	bytes   uint64
	// xdpFrames are the frames the XDP program dropped (one each).
	xdpFrames uint64
}

// Summary reports the cuts as the kernel's set elements show them (time
// left, counters), joined with what triggered each. Per-element counters
// count each frame twice (the lookup and the update both touch them), so
// frames are half the counter.
func (e *Engine) Summary() cut.Summary {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := cut.Summary{
		Enabled:    e.cfg.Enabled,
		InFastpath: e.inFast,
		Reason:     e.reason,
		Devices:    append([]string{}, e.devices...),
		Backends:   append([]cut.Backend(nil), e.xdp.backends...),
		XDPForward: e.forwardSummary(),
		Expiry:     e.cfg.Expiry.Seconds(),
		SetSize:    e.cfg.SetSize,
		Warnings:   append(append([]string{}, e.warnings...), e.recent...),
	}
	if !e.synced {
		s.Reason = "not set up yet"
	}
	s.Blocklists = e.lists.Load().Report()
	elems := map[string]element{}
	now := e.nowFn()
	if e.inFast {
		for _, set := range []*nftables.Set{e.set4, e.set6} {
			got, err := e.nft.GetSetElements(set)
			if err != nil {
				s.Warnings = append(s.Warnings, fmt.Sprintf("cut: read set %s: %v", set.Name, err))
				continue
			}
			for _, el := range got {
				t, err := cut.DecodeKey(el.Key)
				if err != nil || e.isReleased(t.String(), now) {
					continue // a released element a frame in flight re-added: it drops nothing
				}
				x := element{tuple: t, expires: el.Expires.Seconds()}
				if el.Counter != nil {
					x.packets, x.bytes = el.Counter.Packets, el.Counter.Bytes
				}
				elems[t.String()] = x
			}
		}
	}
	if e.inFast {
		e.xdpElements(elems, func(w string) { s.Warnings = append(s.Warnings, w) })
	}
	seen := map[string]bool{}
	var unseen []string
	for key, r := range e.cuts {
		c := r.Cut
		if !c.InFastpath {
			// A fallback cut lives only as long as its report is useful.
			if now.Sub(c.Since) > e.cfg.Expiry {
				delete(e.cuts, key)
				continue
			}
			s.Cuts = append(s.Cuts, c)
			continue
		}
		alive := false
		c.Expires, c.Frames, c.Bytes = 0, 0, 0
		var touches, dropped uint64
		for _, k := range r.keys {
			if el, ok := elems[k]; ok {
				alive = true
				seen[k] = true
				touches += el.packets
				dropped += el.xdpFrames
				c.Bytes += el.bytes / 2
				if el.expires > c.Expires {
					c.Expires = el.expires
				}
			}
		}
		if !alive {
			unseen = append(unseen, key) // expired, or skipped by the dump
			continue
		}
		c.Frames = touches/2 + dropped
		c.ExpiresIn = secondsDuration(c.Expires)
		s.Cuts = append(s.Cuts, c)
	}
	s.Cuts = append(s.Cuts, e.confirmUnseen(unseen)...)
	// Elements nobody here put in: added by hand or before a restart.
	for k, el := range elems {
		if seen[k] {
			continue
		}
		s.Cuts = append(s.Cuts, cut.Cut{
			Original: el.tuple, Reply: el.tuple.Reverse(), Trigger: "unknown",
			Reason: "element found in the cut set", Expires: el.expires, ExpiresIn: secondsDuration(el.expires),
			Frames: el.packets/2 + el.xdpFrames, Bytes: el.bytes / 2, InFastpath: true,
		})
	}
	sort.Slice(s.Cuts, func(i, j int) bool { return s.Cuts[i].Original.String() < s.Cuts[j].Original.String() })
	for _, c := range s.Cuts {
		s.FramesDropped += c.Frames
		if c.InFastpath {
			s.Active++
		}
	}
	return s
}

// confirmUnseen looks up the elements of the cuts (by key) the dump did
// not show: a cut whose elements are gone has expired and is forgotten;
// one the dump skipped is reported (its counters unread). The caller
// holds e.mu.
func (e *Engine) confirmUnseen(keys []string) (live []cut.Cut) {
	if len(keys) == 0 {
		return nil
	}
	if !e.inFast || e.table == nil {
		for _, k := range keys {
			delete(e.cuts, k) // the sets are gone
		}
		return nil
	}
	var ts []cut.Tuple
	for _, k := range keys {
		c := e.cuts[k].Cut
		ts = append(ts, c.Original, c.Reply)
	}
	found, err := e.lookupTuples(ts)
	now := e.nowFn()
	for t := range found {
		if e.isReleased(t, now) {
			delete(found, t) // re-added by a frame in flight: it drops nothing
		}
	}
	for _, k := range keys {
		c := e.cuts[k].Cut
		c.Expires, c.Frames, c.Bytes = 0, 0, 0
		o, inO := found[c.Original.String()]
		r, inR := found[c.Reply.String()]
		if err == nil && !inO && !inR {
			delete(e.cuts, k) // expired in the kernel
			continue
		}
		c.Expires = max(o, r)
		c.ExpiresIn = secondsDuration(c.Expires)
		live = append(live, c)
	}
	return live
}

func isNoEnt(err error) bool { return errors.Is(err, unix.ENOENT) }

func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
