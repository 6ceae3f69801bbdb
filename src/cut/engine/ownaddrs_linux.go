//go:build linux

package engine

import (
	"net/netip"
	"strconv"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// readOwnAddrs reads the router's addresses (RTM_GETADDR) through a socket
// opened in the engine's network namespace. The caller holds e.mu.
func (e *Engine) readOwnAddrs() {
	msgs, err := e.rt.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_GETADDR, Flags: netlink.Request | netlink.Dump},
		Data:   []byte{unix.AF_UNSPEC, 0, 0, 0, 0, 0, 0, 0}, // ifaddrmsg
	})
	if err != nil {
		e.log.WithError(err).Warn("cut: the router's own addresses could not be read; connections to them are not told apart")
		return
	}
	own := map[netip.Addr]bool{}
	for _, m := range msgs {
		if len(m.Data) < 8 {
			continue
		}
		ad, err := netlink.NewAttributeDecoder(m.Data[8:])
		if err != nil {
			continue
		}
		for ad.Next() {
			if t := ad.Type(); t == unix.IFA_ADDRESS || t == unix.IFA_LOCAL {
				if a, ok := netip.AddrFromSlice(ad.Bytes()); ok {
					own[a.Unmap()] = true
				}
			}
		}
	}
	e.own = own
}

// isLocal reports whether the router itself is an end of f, as
// rpc.MarkLocal decides it: sent to one of its addresses and answered from
// it, or sent from one and answered to it (a masqueraded forward flow has
// the router's address only in its reply, so it is not).
func isLocal(f netstate.Flow, own map[netip.Addr]bool) bool {
	if len(own) == 0 {
		return false
	}
	is := func(s string) bool {
		a, err := netip.ParseAddr(s)
		return err == nil && own[a.Unmap()] // conntrack addresses carry no zone
	}
	o, r := f.Original, f.Reply
	return (is(o.Dst) && is(r.Src)) || (is(o.Src) && is(r.Dst))
}

// spareLocal drops the flows the router itself is an end of, unless
// allowed, and says how many it dropped. The caller holds e.mu.
func (e *Engine) spareLocal(flows []netstate.Flow, allowed bool) ([]netstate.Flow, int) {
	if allowed || len(e.own) == 0 {
		return flows, 0
	}
	out := flows[:0:0]
	spared := 0
	for _, f := range flows {
		if isLocal(f, e.own) {
			spared++
			continue
		}
		out = append(out, f)
	}
	return out, spared
}

// localRefused is the answer to a cut whose every connection is one of the
// router itself.
func localRefused(n int, field string) error {
	return &cut.RefusedError{Field: field,
		Problem: "every connection it names (" + strconv.Itoa(n) + ") is one of the router itself (its SSH, LuCI, DNS): cutting them can lock its admin out",
		Fix:     "pass local to cut them anyway"}
}
