package daemon

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/observe"
	"github.com/fastpath-wrt/fastpath/src/platform"
	"github.com/fastpath-wrt/fastpath/src/ppe"
	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/status"
	"github.com/fastpath-wrt/fastpath/src/why"
)

var _ rpc.WhyController = controller{}

// Why reads the connections the query names from conntrack (narrowed by
// the kernel as `flows` is), the status as `status` reads it, and the
// kernel's route toward each end, and explains each connection.
func (c controller) Why(ctx context.Context, q rpc.WhyQuery) ([]why.Answer, int, error) {
	f, err := whyFilter(q)
	if err != nil {
		return nil, 0, err
	}
	entries, total, err := c.d.ct.Entries(f, q.Limit)
	if err != nil {
		return nil, 0, err
	}
	st := c.d.statusUncounted(ctx)
	r := routerFacts{
		status:     st,
		pppoe:      c.d.pppoeDevices(),
		own:        ownAddrs(),
		route:      cachedRoutes(),
		accounting: readFlag(filepath.Join(c.d.Root, "proc/sys/net/netfilter/nf_conntrack_acct")),
		wed:        readFlag(filepath.Join(c.d.Root, "sys/module/mt7915e/parameters/wed_enable")),
	}
	if st.Mode.Effective == "hardware" && observe.PPETablesReadable(st.Platform) {
		root := c.d.Root
		r.ppe = func(dirs ...ppe.Dir) ppe.Found { return ppe.FindFlow(root, dirs...) }
	}
	answers := make([]why.Answer, 0, len(entries))
	for _, e := range entries {
		answers = append(answers, why.Explain(r.facts(e)))
	}
	// A cut deletes the connection's conntrack entry, and its dropped
	// frames make no new one: what is cut is known from the cut alone.
	for _, ct := range st.Cut.Cuts {
		if !cutNamed(ct, q) || tracked(ct, entries) {
			continue
		}
		total++
		if len(answers) < q.Limit {
			answers = append(answers, why.Explain(r.cutFacts(ct)))
		}
	}
	return answers, total, nil
}

// cutNamed: the query names the cut connection.
func cutNamed(c cut.Cut, q rpc.WhyQuery) bool {
	if q.Address == "" {
		return c.Names(q.Tuple)
	}
	p, err := cut.ParsePrefix(q.Address)
	return err == nil && c.HasAddressIn(p.Masked())
}

func tracked(c cut.Cut, entries []netstate.Entry) bool {
	for _, e := range entries {
		if c.Names(e.Flow.Original) {
			return true
		}
	}
	return false
}

// cutFacts are the facts of a cut connection conntrack no longer holds.
func (r routerFacts) cutFacts(c cut.Cut) why.Facts {
	family := "ipv4"
	if a, err := netip.ParseAddr(c.Original.Src); err == nil && a.Unmap().Is6() {
		family = "ipv6"
	}
	fl := netstate.Flow{Family: family, Proto: c.Original.Proto, Original: c.Original, Reply: c.Reply}
	f := r.facts(netstate.Entry{Flow: fl})
	f.NoConntrack = true
	return f
}

// whyFilter asks conntrack for the entries with an end in the address,
// or for the one of the tuple, either direction (its source narrows the
// dump).
func whyFilter(q rpc.WhyQuery) (conntrack.Filter, error) {
	if q.Address != "" {
		p, err := cut.ParsePrefix(q.Address)
		if err != nil {
			return conntrack.Filter{}, &rpc.ArgumentError{Field: "address", Problem: err.Error(), Fix: "give an IP address or a CIDR prefix"}
		}
		return conntrack.Filter{Address: p.Masked()}, nil
	}
	src, err := netip.ParseAddr(q.Tuple.Src)
	if err != nil {
		return conntrack.Filter{}, &rpc.ArgumentError{Field: "src", Problem: err.Error(), Fix: "give one IP address"}
	}
	return conntrack.Filter{Proto: q.Tuple.Proto, Address: netip.PrefixFrom(src, src.BitLen()), Conn: q.Tuple}, nil
}

// routerFacts are what every connection's explanation shares.
type routerFacts struct {
	status     status.Status
	own        []netip.Addr
	route      func(netip.Addr) (observe.Route, error)
	pppoe      map[string]string // a PPPoE interface's device (pppoe-wan) -> the device it runs on
	accounting *bool
	wed        *bool
	// ppe finds a flow in the offload engine's tables; nil where they
	// are not read (no engine, or reading would clear its counters).
	ppe func(dirs ...ppe.Dir) ppe.Found
}

// facts gathers what Explain reads about one entry.
func (r routerFacts) facts(e netstate.Entry) why.Facts {
	st := r.status
	k := st.Flowtable.Kernel
	f := why.Facts{
		Entry: e,
		Offload: why.Offload{
			Mode:       st.Mode.Effective,
			Flowtable:  k.FlowtablePresent && k.ForwardRule,
			Devices:    k.Devices,
			Planned:    st.Flowtable.Devices,
			AfterPkts:  k.OffloadAfterPackets,
			Accounting: r.accounting,
			SoC:        st.Platform.SoC,
		},
	}
	if soc := st.Platform.SoC; soc == "mt7981" || soc == "mt7986" {
		f.Offload.WED = r.wed
	}
	flows := []netstate.Flow{e.Flow}
	rpc.MarkLocal(flows, r.own)
	if flows[0].Local {
		f.Local = localAddr(e.Flow, r.own)
	}
	for i, addr := range why.Ends(e.Flow) {
		f.Sides[i] = r.side(addr)
	}
	if r.ppe != nil && e.Flow.Offload != "" {
		found := r.ppe(ppeDir(e.Flow.Original), ppeDir(e.Flow.Reply))
		f.PPE = &why.PPE{Engine: st.Platform.HWOffloadEngine, State: found.State, Table: found.Table, Error: found.Error}
	}
	for _, c := range st.Cut.Cuts {
		if c.Names(e.Flow.Original) {
			f.Cut = &why.Cut{Trigger: c.Trigger, Reason: c.Reason, InFastpath: c.InFastpath}
			break
		}
	}
	return f
}

// side is the device the kernel routes toward addr, with what the
// platform knows of it: its kind, the devices its frames enter on, and
// the plan's verdict when it is a tunnel's.
func (r routerFacts) side(addr string) why.Side {
	s := why.Side{Address: addr, From: "the kernel's route (ip route get " + addr + ")"}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		s.Error = "not an address"
		return s
	}
	rt, err := r.route(a.Unmap())
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.Device = rt.Device
	devs := map[string]platform.Device{}
	for _, d := range r.status.Platform.Devices {
		devs[d.Name] = d
	}
	s.Kind = devs[s.Device].Kind
	if s.Kind == "" && r.pppoe[s.Device] != "" {
		s.Kind = "ppp"
	}
	if enter := r.enter(s.Device, devs); len(enter) != 1 || enter[0].Name != s.Device {
		s.Enter = enter
	}
	for _, t := range r.status.Tunnels {
		if t.Device == s.Device {
			s.Tunnel = &why.Tunnel{Kind: t.Kind, Underlay: t.Underlay, InFastpath: t.InFastpath, Reason: t.Reason}
		}
	}
	return s
}

// enter follows a device to the devices its frames enter on, as the
// kernel's forward path does: a bridge to its ports, a VLAN to its
// parent, a PPPoE interface to the device it runs on (the plan lists
// those for the same reason).
func (r routerFacts) enter(name string, devs map[string]platform.Device) []why.Port {
	var out []why.Port
	seen := map[string]bool{}
	var walk func(n string, depth int)
	walk = func(n string, depth int) {
		if seen[n] || depth > 8 {
			return
		}
		seen[n] = true
		d := devs[n]
		switch {
		case (d.Kind == "bridge" || d.Kind == "vlan") && len(d.Lower) > 0:
			for _, l := range d.Lower {
				walk(l, depth+1)
			}
		case r.pppoe[n] != "":
			walk(r.pppoe[n], depth+1)
		default:
			out = append(out, why.Port{Name: n, Kind: d.Kind})
		}
	}
	walk(name, 0)
	return out
}

// pppoeDevices maps each PPPoE interface's device (netifd names it
// pppoe-IFACE) to the device it runs on, from the last pass's config.
func (r *Reconciler) pppoeDevices() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{}
	for _, ifc := range r.last.snap.Settings.Network.Interfaces {
		if ifc.Proto == "pppoe" && ifc.Device != "" {
			out["pppoe-"+ifc.Name] = ifc.Device
		}
	}
	return out
}

// ppeDir is a direction as the engine keys it.
func ppeDir(t netstate.Tuple) ppe.Dir {
	src, _ := netip.ParseAddr(t.Src)
	dst, _ := netip.ParseAddr(t.Dst)
	return ppe.Dir{Src: src, Dst: dst, SrcPort: t.SrcPort, DstPort: t.DstPort}
}

// localAddr is the router's address among the connection's ends.
func localAddr(fl netstate.Flow, own []netip.Addr) string {
	for _, s := range []string{fl.Original.Dst, fl.Original.Src, fl.Reply.Src, fl.Reply.Dst} {
		a, err := netip.ParseAddr(s)
		if err != nil {
			continue
		}
		for _, o := range own {
			if o.Unmap() == a.Unmap() {
				return s
			}
		}
	}
	return "an address of the router"
}

// cachedRoutes asks the kernel once per address for one answer.
func cachedRoutes() func(netip.Addr) (observe.Route, error) {
	type answer struct {
		rt  observe.Route
		err error
	}
	seen := map[netip.Addr]answer{}
	return func(a netip.Addr) (observe.Route, error) {
		if v, ok := seen[a]; ok {
			return v.rt, v.err
		}
		rt, err := observe.KernelRoute(0, a, netip.Addr{})
		seen[a] = answer{rt, err}
		return rt, err
	}
}

// readFlag reads a sysctl or module parameter: 1/Y true, 0/N false, nil
// when it is not there.
func readFlag(path string) *bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var v bool
	switch strings.TrimSpace(string(b)) {
	case "1", "Y", "y":
		v = true
	case "0", "N", "n":
	default:
		return nil
	}
	return &v
}
