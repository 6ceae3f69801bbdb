//go:build linux

package engine

import (
	"fmt"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/cut/xdp"
	"github.com/google/nftables"
)

// Each device drops cut frames in one backend: native XDP in its driver
// (src/cut/xdp) where the driver has it and no other XDP program runs
// there, else the netdev table's ingress chain. Both hold the same cuts:
// every cut goes into the sets (for the netdev devices) and into the XDP
// map. The map is never filled by frames, so a release (a delete) holds
// under any flood, and expiry is ours: tuples quiet for cut_expiry go.
//
// The program is attached when the cut starts on a device and stays while
// no cut is active: on mtk_eth_soc and mvneta the first attach and the
// last detach stop and reopen the port (link down and up, rings
// reallocated), so attaching per cut would flap the WAN link with every
// first cut and last expiry. It is detached when the daemon ends (no
// daemon, no expiry: a cut would last for ever), when cut_backend becomes
// netdev and when fastpath is turned off.

// xdpSide is the XDP backend of the devices that run it.
type xdpSide struct {
	b         *xdp.Backend
	size      int             // tuples b's map holds
	veth      bool            // b runs on veths too (cut_backend xdp)
	forward   bool            // b was opened to forward (xdp_forward)
	openErr   string          // why the backend could not start; "" when it runs
	runs      map[string]bool // devices whose driver runs the program
	backends  []cut.Backend   // every device's choice, for the summary
	expireGen uint64          // the expiry check that counts
	expireDue time.Time
}

// syncBackends decides each device's backend for e.cfg and e.devices and
// attaches or detaches the program to match. The caller holds e.mu.
func (e *Engine) syncBackends() {
	x := &e.xdp
	x.backends = x.backends[:0]
	x.runs = map[string]bool{}
	if e.cfg.Backend == cut.BackendNetdev {
		e.mapToSets(true)
		e.closeXDP()
		for _, d := range e.devices {
			x.backends = append(x.backends, cut.Backend{Device: d, Backend: cut.BackendNetdev, Reason: "cut_backend is netdev"})
		}
		return
	}
	size := min(2*e.cfg.SetSize, cut.MaxSetSize)
	veth := e.cfg.Backend == cut.BackendXDP // auto leaves veths to netdev ingress: see xdp.Options.Veth
	// A kernel that refused once (no bpf(2), the verifier) is asked again
	// only for another size, not on every reconcile.
	forward := e.cfg.XDPForward
	if (x.size != size || x.veth != veth || x.forward != forward || x.b == nil && x.openErr == "") && len(e.devices) > 0 {
		// A new cut_set_size needs a new map, and so a new program: it
		// replaces the old one on each device (no detach, so no port
		// restart) and takes its cuts over, as after a restart.
		b, err := xdp.Open(xdp.Options{MaxEntries: size, NetNS: max(e.netNS, 0), Veth: veth, Forward: forward})
		if err != nil {
			x.openErr, x.size, x.veth, x.forward = err.Error(), size, veth, forward
		} else {
			if x.b != nil {
				defer x.b.Leave()
			}
			x.b, x.size, x.veth, x.forward, x.openErr = b, size, veth, forward, ""
		}
	}
	if x.b == nil {
		for _, d := range e.devices {
			x.backends = append(x.backends, cut.Backend{Device: d, Backend: cut.BackendNetdev, Reason: "the XDP cut could not start (" + x.openErr + "); cutting at netdev ingress"})
		}
		e.backendWarnings()
		return
	}
	devs, err := x.b.SetDevices(e.devices)
	if err != nil {
		e.warn("cut: " + err.Error())
	}
	for _, d := range devs {
		b := cut.Backend{Device: d.Name, Backend: cut.BackendNetdev, Reason: d.Reason}
		if d.XDP {
			b.Backend = cut.BackendXDP
			x.runs[d.Name] = true
		}
		x.backends = append(x.backends, b)
	}
	e.mapToSets(false)
	e.backendWarnings()
	e.scheduleExpire(e.cfg.Expiry)
}

// missedHint is how many lookups in vain, with none found, make the summary
// name the likely cause.
const missedHint = 10000

// forwardSummary says where the XDP program forwards, or why it does not.
// The caller holds e.mu.
func (e *Engine) forwardSummary() *cut.ForwardSummary {
	x := &e.xdp
	if !e.cfg.XDPForward {
		return nil
	}
	f := &cut.ForwardSummary{}
	switch on, err := false, error(nil); {
	case x.b == nil && x.openErr != "":
		f.Reason = "the XDP program could not start: " + x.openErr
	case x.b == nil:
		f.Reason = "no flowtable device yet"
	default:
		if on, err = x.b.Forwarding(); !on {
			f.Reason = err.Error() + "; the XDP program cuts only"
			break
		}
		for _, b := range x.backends {
			if b.Backend == cut.BackendXDP {
				f.Devices = append(f.Devices, b.Device)
			}
		}
		f.Active = len(f.Devices) > 0
		f.Reason = "bpf_xdp_flow_lookup in the XDP cut's program: established flows of the flowtable leave in the driver; first packets, TCP FIN/RST, fragments, IPv4 options, VLAN/PPPoE/tunnel paths and frames over the MTU take the kernel's flowtable"
		if !f.Active {
			f.Reason = "no device runs the XDP program (see backends)"
		}
		c, err := x.b.ForwardCounters()
		if err != nil {
			f.Reason += "; counters: " + err.Error()
		}
		f.Forwarded, f.Missed, f.Passed = c.Forwarded, c.Missed, c.Passed
		if f.Active && f.Forwarded == 0 && f.Missed >= missedHint {
			f.Reason += fmt.Sprintf("; none of %d TCP/UDP frames looked up found a flow: if fastpath's flowtable holds offloaded flows, another flowtable listing these devices was made first (firewall4's, at boot), and the kernel's XDP lookup reads only the first; a firewall4 reload puts fastpath's first", f.Missed)
		}
	}
	return f
}

// mapToSets puts the XDP map's tuples in the cut sets, where their
// elements may have expired (no ingress chain refreshed them), so that
// devices cutting in the netdev table drop them too: all of them when the
// XDP backend goes (all), else when some device cuts in the table. The
// caller holds e.mu.
func (e *Engine) mapToSets(all bool) {
	if e.xdp.b == nil || e.set4 == nil || !all && len(e.chainDevices()) == 0 {
		return
	}
	stats, err := e.xdp.b.Stats()
	if err != nil {
		e.warn("cut: " + err.Error())
	}
	for lo := 0; lo < len(stats); lo += 2 * insertChunk {
		var els4, els6 []nftables.SetElement
		for _, st := range stats[lo:min(lo+2*insertChunk, len(stats))] {
			key, v6, err := cut.Key(st.Tuple)
			if err != nil {
				continue
			}
			if el := (nftables.SetElement{Key: key, Timeout: e.cfg.Expiry}); v6 {
				els6 = append(els6, el)
			} else {
				els4 = append(els4, el)
			}
		}
		err := e.flushWithChains(func() error {
			for _, q := range []struct {
				set *nftables.Set
				els []nftables.SetElement
			}{{e.set4, els4}, {e.set6, els6}} {
				if len(q.els) > 0 {
					if err := e.nft.SetAddElements(q.set, q.els); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			e.note(fmt.Sprintf("cut: %d cut tuple(s) of the XDP map could not go in the cut sets: %v; devices cutting at netdev ingress let them through", len(els4)+len(els6), err))
		}
	}
	if len(stats) > 0 {
		e.scheduleIdleCheckAfterInsert()
	}
}

// backendWarnings says, when cut_backend is xdp, which devices could not
// run it. The caller holds e.mu.
func (e *Engine) backendWarnings() {
	if e.cfg.Backend != cut.BackendXDP {
		return
	}
	for _, b := range e.xdp.backends {
		if b.Backend != cut.BackendXDP {
			e.warn(fmt.Sprintf("cut: cut_backend is xdp, but %s cannot run it: %s", b.Device, b.Reason))
		}
	}
}

// closeXDP detaches the program wherever it is still ours and frees the
// map. The caller holds e.mu.
func (e *Engine) closeXDP() error {
	x := &e.xdp
	x.expireGen++
	x.expireDue = time.Time{}
	x.runs, x.backends, x.openErr = nil, nil, ""
	if x.b == nil {
		return nil
	}
	err := x.b.Close()
	x.b = nil
	if err != nil {
		return fmt.Errorf("cut: %w", err)
	}
	return nil
}

// chainDevices are the devices the netdev table cuts on: those that do not
// run the XDP program. The caller holds e.mu.
func (e *Engine) chainDevices() []string {
	if len(e.xdp.runs) == 0 {
		return e.devices
	}
	out := make([]string, 0, len(e.devices))
	for _, d := range e.devices {
		if !e.xdp.runs[d] {
			out = append(out, d)
		}
	}
	return out
}

// xdpInsert puts both tuples of cuts in the XDP map; a cut the map took is
// in the fast path. The caller holds e.mu.
func (e *Engine) xdpInsert(cuts []cut.Cut) {
	if e.xdp.b == nil || len(e.xdp.runs) == 0 {
		return
	}
	for i := range cuts {
		c := &cuts[i]
		if err := e.xdp.b.Cut([]cut.Tuple{c.Original, c.Reply}); err != nil {
			e.note(fmt.Sprintf("cut %s: not in the XDP map: %v; the devices running XDP let it through", c.Original, err))
			continue
		}
		c.InFastpath = true
	}
	e.scheduleExpire(e.cfg.Expiry + idleSlack)
}

// xdpRelease deletes c's tuples from the XDP map and says whether one was
// there. The caller holds e.mu.
func (e *Engine) xdpRelease(c cut.Cut) bool {
	if e.xdp.b == nil {
		return false
	}
	n, err := e.xdp.b.Release([]cut.Tuple{c.Original, c.Reply})
	if err != nil {
		e.note(fmt.Sprintf("release %s from the XDP map: %v", c.Original, err))
	}
	return n > 0
}

// xdpElements adds what the XDP map holds to elems, by tuple: frames and
// time left as cut_expiry counts it from the last frame. The caller holds
// e.mu.
func (e *Engine) xdpElements(elems map[string]element, warn func(string)) {
	if e.xdp.b == nil {
		return
	}
	stats, err := e.xdp.b.Stats()
	if err != nil {
		warn("cut: " + err.Error())
	}
	now := e.nowFn()
	for _, st := range stats {
		last := st.LastSeen
		if last.IsZero() {
			last = st.Since
		}
		left := max(e.cfg.Expiry-now.Sub(last), 0).Seconds()
		k := st.Tuple.String()
		el, ok := elems[k]
		if !ok {
			el = element{tuple: st.Tuple}
		}
		el.xdpFrames = st.Packets
		el.expires = max(el.expires, left)
		elems[k] = el
	}
}

// scheduleExpire runs expireXDP after d, unless one runs sooner. The
// caller holds e.mu.
func (e *Engine) scheduleExpire(d time.Duration) {
	x := &e.xdp
	if x.b == nil {
		return
	}
	due := time.Now().Add(d)
	if !x.expireDue.IsZero() && x.expireDue.Before(due) {
		return
	}
	x.expireGen++
	gen := x.expireGen
	x.expireDue = due
	time.AfterFunc(d, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if gen != e.xdp.expireGen {
			return
		}
		e.xdp.expireDue = time.Time{}
		e.expireXDP()
	})
}

// expireXDP releases the tuples quiet for cut_expiry, then looks again
// when the next one would be. The caller holds e.mu.
func (e *Engine) expireXDP() {
	x := &e.xdp
	if x.b == nil {
		return
	}
	_, next, err := x.b.Expire(e.cfg.Expiry)
	switch {
	case err != nil:
		e.log.WithError(err).Warn("cut: XDP expiry")
		e.scheduleExpire(e.cfg.Expiry)
	case next > 0:
		e.scheduleExpire(next + idleSlack)
	}
}
