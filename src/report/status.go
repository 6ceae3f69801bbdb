package report

import (
	"fmt"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/status"
)

// StatusText is `fastpath status` for people.
func StatusText(st status.Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mode        %s (requested %s)\n", orDash(st.Mode.Effective), orDash(st.Mode.Requested))
	fmt.Fprintf(&b, "why         %s\n", st.Mode.Reason)
	p := st.Platform
	fmt.Fprintf(&b, "platform    %s, soc %s: %s\n", orDash(p.BoardName), orDash(p.SoC), p.HWOffloadReason)
	k := st.Flowtable.Kernel
	if k.FlowtablePresent {
		flags := Flags(netstate.FlowtableSpec{Hardware: k.Hardware, Counter: k.Counter})
		fmt.Fprintf(&b, "flowtable   %s %s in the kernel: devices %s, flags %s%s\n", st.Flowtable.Table, st.Flowtable.Name,
			list(k.Devices), list(flags), yesNo(st.Flowtable.InSync, "", " (differs from the plan: "+list(st.Flowtable.Devices)+")"))
	} else {
		fmt.Fprintf(&b, "flowtable   none in the kernel (planned devices %s)\n", list(st.Flowtable.Devices))
	}
	fmt.Fprintf(&b, "flows       %d tracked, %d offloaded (%d in hardware)", st.Flows.Total, st.Flows.Offloaded, st.Flows.HWOffloaded)
	if st.Flows.OffloadedAge >= 1 {
		fmt.Fprintf(&b, ", offloaded counted %.0f s ago", st.Flows.OffloadedAge)
	}
	b.WriteString("\n")
	if st.HWFlows.Reason != "" {
		fmt.Fprintf(&b, "hardware    %s\n", st.HWFlows.Reason)
	}
	fmt.Fprintf(&b, "kernel      %s: flowtable %s, netdev tables %s, IPIP acceleration %s, ip6tnl path %s\n", orDash(st.Kernel.Release),
		yesNo(st.Kernel.Flowtable, "yes", "no"), yesNo(st.Kernel.NetdevTable, "yes", "no"), yesNo(st.Kernel.IPIPRxAccel, "yes", "no"), yesNo(st.Kernel.IP6TnlPath, "yes (IPv6 inside only)", "no"))
	for _, m := range st.Kernel.Missing {
		fmt.Fprintf(&b, "            %s\n", m)
	}
	for _, t := range st.Tunnels {
		fmt.Fprintf(&b, "tunnel      %s: %s: %s\n", t.Device, yesNo(t.InFastpath, "fast path", "slow path"), t.Reason)
	}
	rc := st.Recheck
	b.WriteString("recheck     " + yesNo(rc.Enabled, "on", "off") + ": " + orDash(rc.Firewall) + "\n")
	if rc.Last != nil {
		b.WriteString("            " + rc.Last.Reason + "\n")
	}
	c := st.Cut
	fmt.Fprintf(&b, "cut         %s, %d active, %d frames dropped in the fast path\n",
		yesNo(c.InFastpath, "in the fast path", yesNo(c.Enabled, "conntrack deletion only", "off")), c.Active, c.FramesDropped)
	b.WriteString(BackendsText(c.Backends))
	if f := c.XDPForward; f != nil {
		if f.Active {
			fmt.Fprintf(&b, "xdp forward on %s: %d frames sent out in the driver, %d left to the flowtable, %d of no flow\n",
				strings.Join(f.Devices, ", "), f.Forwarded, f.Passed, f.Missed)
		} else {
			fmt.Fprintf(&b, "xdp forward not running: %s\n", f.Reason)
		}
	}
	for _, e := range st.Errors {
		fmt.Fprintf(&b, "error       %s\n", e)
	}
	b.WriteString(more("error       ", st.ErrorsTotal, len(st.Errors), "errors"))
	return b.String()
}

// FlowsText is `fastpath flows` for people: one line a flow.
func FlowsText(flows []netstate.Flow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-5s %-8s %-47s %-47s %-12s %10s %12s\n", "PROTO", "OFFLOAD", "ORIGINAL", "REPLY", "STATE", "PACKETS", "BYTES")
	for _, f := range flows {
		fmt.Fprintf(&b, "%-5s %-8s %-47s %-47s %-12s %10d %12d\n", f.Proto, orDash(f.Offload),
			endpoint(f.Original.Src, f.Original.SrcPort)+" > "+endpoint(f.Original.Dst, f.Original.DstPort),
			endpoint(f.Reply.Src, f.Reply.SrcPort)+" > "+endpoint(f.Reply.Dst, f.Reply.DstPort),
			orDash(f.State), f.Packets, f.Bytes)
	}
	return b.String()
}

func endpoint(addr string, port uint16) string {
	if strings.Contains(addr, ":") {
		return fmt.Sprintf("[%s]:%d", addr, port)
	}
	return fmt.Sprintf("%s:%d", addr, port)
}

func list(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}
