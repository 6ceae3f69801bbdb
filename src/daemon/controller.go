package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/plan"
	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/status"
)

// controller answers the fastpath ubus object.
type controller struct {
	d *Daemon
}

var _ rpc.Controller = controller{}

func (c controller) Status(ctx context.Context) (status.Status, error) {
	return c.d.Status(ctx), nil
}

func (c controller) Capabilities(ctx context.Context) (rpc.Capabilities, error) {
	st := c.d.statusUncounted(ctx)
	modes := []string{plan.ModeOff}
	if st.Kernel.Flowtable {
		modes = append(modes, plan.ModeSoftware)
		if st.Platform.HWOffloadCapable {
			modes = append(modes, plan.ModeHardware)
		}
	}
	return rpc.Capabilities{Platform: st.Platform, Kernel: st.Kernel, Modes: modes}, nil
}

// Flows asks conntrack for the flows the query selects: the kernel
// narrows the dump by offload bits and protocol where it can, the rest
// (the address, older kernels' share) is checked on each entry as it
// streams by, and only the first q.Limit are decoded.
func (c controller) Flows(ctx context.Context, q rpc.FlowQuery) ([]netstate.Flow, int, error) {
	f := conntrack.Filter{Proto: q.Proto, Offload: q.Offload}
	if q.Address != "" {
		p, err := cut.ParsePrefix(q.Address)
		if err != nil {
			return nil, 0, &rpc.ArgumentError{Field: "address", Problem: err.Error(), Fix: "give an IP address or a CIDR prefix"}
		}
		f.Address = p.Masked()
	}
	flows, total, err := c.d.ct.Select(f, q.Limit)
	if err != nil {
		return nil, 0, err
	}
	rpc.MarkLocal(flows, ownAddrs())
	return flows, total, nil
}

// ownAddrs are the router's addresses now; none when they cannot be read
// (then no flow is marked local).
func ownAddrs() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	own := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				own = append(own, ip.Unmap())
			}
		}
	}
	return own
}

func (c controller) SetMode(ctx context.Context, mode string) (status.Status, error) {
	notes, err := c.d.Reconciler.SetMode(ctx, mode)
	for _, n := range notes {
		c.d.Log.Warn(n)
	}
	if err != nil {
		return status.Status{}, err
	}
	return c.d.Pass(ctx, "ubus set")
}

// Reload re-plans: it joins the pass pending in the daemon's loop, so a
// burst of reloads costs at most one pass beyond the one running. The
// answer is the status either way: a plan that could not be applied is
// reported there, not as a failed call.
func (c controller) Reload(ctx context.Context) (status.Status, error) {
	return c.d.Pass(ctx, "ubus reload")
}

func (c controller) Cut(ctx context.Context, r rpc.CutRequest) ([]cut.Cut, error) {
	var cuts []cut.Cut
	var err error
	if r.Address != "" {
		p, perr := cut.ParsePrefix(r.Address)
		if perr != nil {
			return nil, &rpc.ArgumentError{Field: "address", Problem: perr.Error(), Fix: "give an IP address or a CIDR prefix"}
		}
		cuts, err = c.d.cut.CutAddress(ctx, p, r.Reason, r.Trigger, r.Options)
	} else {
		cuts, err = c.d.cut.CutTuple(ctx, r.Tuple, r.Reason, r.Trigger, r.Options)
	}
	var refused *cut.RefusedError
	if errors.As(err, &refused) {
		return nil, &rpc.ArgumentError{Field: refused.Field, Problem: refused.Problem, Fix: refused.Fix}
	}
	if cuts == nil {
		cuts = []cut.Cut{}
	}
	return cuts, err
}

func (c controller) Uncut(ctx context.Context, r rpc.CutRequest) (int, error) {
	match, err := cutMatcher(r)
	if err != nil {
		return 0, err
	}
	return c.d.cut.Release(ctx, match)
}

func (c controller) Verdict(ctx context.Context, r rpc.VerdictRequest) ([]cut.Cut, int, error) {
	switch r.Verdict {
	case cut.VerdictDrop:
		cuts, err := c.Cut(ctx, rpc.CutRequest{Tuple: r.Tuple, Reason: r.Reason, Trigger: r.Trigger})
		return cuts, 0, err
	case cut.VerdictForward:
		n, err := c.Uncut(ctx, rpc.CutRequest{Tuple: r.Tuple, Reason: r.Reason, Trigger: r.Trigger})
		return []cut.Cut{}, n, err
	}
	return nil, 0, &rpc.ArgumentError{Field: "verdict", Problem: fmt.Sprintf("%q is not a verdict", r.Verdict), Fix: "use drop or forward"}
}

func (c controller) Cuts(ctx context.Context) (cut.Summary, error) {
	return nonNilSummary(c.d.cut.Summary()), nil
}

// nonNilSummary makes empty lists [] rather than null for JSON readers.
func nonNilSummary(s cut.Summary) cut.Summary {
	if s.Cuts == nil {
		s.Cuts = []cut.Cut{}
	}
	if s.Blocklists == nil {
		s.Blocklists = []cut.Blocklist{}
	}
	if s.Devices == nil {
		s.Devices = []string{}
	}
	return s
}

// cutMatcher selects the cuts a release names: every cut with an end in
// the address's prefix, or the one connection of the tuple, either way.
func cutMatcher(r rpc.CutRequest) (func(cut.Cut) bool, error) {
	if r.Address == "" {
		return func(c cut.Cut) bool { return c.Names(r.Tuple) }, nil
	}
	p, err := cut.ParsePrefix(r.Address)
	if err != nil {
		return nil, &rpc.ArgumentError{Field: "address", Problem: err.Error(), Fix: "give an IP address or a CIDR prefix"}
	}
	return func(c cut.Cut) bool { return c.HasAddressIn(p) }, nil
}
