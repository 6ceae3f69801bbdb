// Package why tells, for one connection, where it is now (offloaded in
// hardware or software, the slow path, cut) and why it is not offloaded,
// reading the facts observed about it the way the kernel decides.
package why

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// The kernel's decision, as read in net/netfilter/nft_flow_offload.c
// (nft_flow_offload_eval: the same checks in the 6.6.y and 6.18.y stable
// trees and in mainline at 0401bbf56da5) and nf_flow_table_ip.c (the
// flowtable's hooks), for a packet of a forwarded connection:
//
//  0. netdev ingress, priority -500: fastpath's cut drops the frames of a
//     cut connection before anything below sees them.
//  1. The routing decision: a connection of the router itself goes to
//     input/output and never meets the forward hook.
//  2. fastpath's forward chain (priority filter - 1) and its rule
//     `meta l4proto { tcp, udp } [ct packets >= N] flow add @ft`: no table
//     or rule, no offload; another protocol, or fewer than N packets (both
//     directions, read from conntrack's accounting), and the rule stops.
//  3. nft_flow_offload_eval, in this order:
//     a. nft_flow_offload_skip: a packet with an IPsec secpath or IPv4
//     options (per packet; conntrack does not show it);
//     b. no conntrack entry: nothing;
//     c. the protocol: TCP, with the packet neither FIN nor RST and
//     nf_conntrack_tcp_established (state ESTABLISHED and IPS_ASSURED);
//     UDP; GRE version 0 without NAT (CONFIG_NF_CT_PROTO_GRE; fastpath's
//     rule never passes GRE); anything else stops;
//     d. a helper extension (NF_CT_EXT_HELPER: FTP, SIP, PPTP, H.323,
//     ...), IPS_SEQ_ADJUST or IPS_NAT_CLASH: stop;
//     e. !nf_ct_is_confirmed: stop (ctnetlink never lists such entries);
//     f. IPS_OFFLOAD already set (test_and_set_bit): stop, it is in a
//     flowtable;
//     g. nft_flow_route: the route back to the other end (no route: stop),
//     then for each direction the device path (dev_fill_forward_path:
//     bridge, VLAN, PPPoE, DSA); a device the flowtable does not list
//     keeps the plain route's device, so the flow is added but frames
//     entering on an unlisted device never meet the flowtable's hook;
//     h. flow_offload_add: the flow is in the flowtable, IPS_OFFLOAD set;
//     with `flags offload` the driver is asked to bind it (IPS_HW_OFFLOAD
//     once it did; MediaTek's PPE shows its own state in debugfs).
//  4. The flowtable's hook (nf_flow_offload_ip_hook) then forwards the
//     flow's packets; a TCP FIN or RST ends its offload (nf_flow_state_check:
//     flow_offload_teardown, and conntrack closes the connection in the slow
//     path; the newest trees mark the flow NF_FLOW_CLOSING and let it
//     expire), as do 30 s without a packet, a route change and a device
//     going down. Once conntrack's state has left ESTABLISHED, step 3c
//     never offloads the connection again.
//
// Explain walks the same order over what conntrack, the routes, the plan,
// the cut and the PPE showed; a check the facts cannot make is left out
// rather than guessed.

// Facts are what was observed about one connection and the router.
type Facts struct {
	Entry netstate.Entry `json:"entry"`
	// Local is the router's own address when it is an end of the
	// connection (as `flows` marks it); "" for a forwarded one.
	Local   string  `json:"local,omitempty"`
	Offload Offload `json:"offload"`
	// Sides are the two ends' devices: [0] toward the original source,
	// [1] toward the reply's source (the far end after NAT).
	Sides [2]Side `json:"sides"`
	Cut   *Cut    `json:"cut,omitempty"` // nil: not cut
	// NoConntrack: conntrack holds no entry for the connection (a cut
	// deletes it, and its dropped frames make no new one): Entry is the
	// cut's record, and the cut is all there is to say.
	NoConntrack bool `json:"no_conntrack,omitempty"`
	PPE         *PPE `json:"ppe,omitempty"` // nil: no engine table read for this flow
}

// Offload is the flowtable as the kernel has it, with the plan's mode.
type Offload struct {
	Mode       string   `json:"mode"`                  // the effective mode: off, software, hardware
	Flowtable  bool     `json:"flowtable"`             // fastpath's flowtable and flow add rule are in the kernel
	Devices    []string `json:"devices"`               // the kernel's flowtable devices
	Planned    []string `json:"planned,omitempty"`     // the plan's devices (a difference: not applied yet)
	AfterPkts  uint64   `json:"offload_after_packets"` // the rule's `ct packets >= N` (0: none)
	Accounting *bool    `json:"accounting,omitempty"`  // net.netfilter.nf_conntrack_acct; nil: unknown
	SoC        string   `json:"soc,omitempty"`
	// WED: MediaTek's Wireless Ethernet Dispatch (mt7915e's wed_enable)
	// on MT7981/MT7986; nil: unknown or not such a SoC.
	WED *bool `json:"wed,omitempty"`
}

// Side is one end of the connection and the device toward it.
type Side struct {
	Address string `json:"address"`
	Device  string `json:"device,omitempty"` // the route's device; "" unknown (Error)
	Kind    string `json:"kind,omitempty"`   // the device's kind as platform reads it: ether, bridge, vlan, wireless, ipip, ...
	// Enter are the devices its frames may enter on when Device is an
	// upper one (a bridge's ports, a VLAN's parent), with their kinds.
	Enter []Port `json:"enter,omitempty"`
	// Tunnel: Device is a tunnel interface's device; the plan's verdict.
	Tunnel *Tunnel `json:"tunnel,omitempty"`
	From   string  `json:"from"`            // where Device came from
	Error  string  `json:"error,omitempty"` // why Device is unknown
}

// Port is a device frames may enter on.
type Port struct {
	Name string `json:"name"`
	Kind string `json:"kind,omitempty"`
}

// Tunnel is what the plan found for a tunnel device.
type Tunnel struct {
	Kind       string `json:"kind"`
	Underlay   string `json:"underlay,omitempty"`
	InFastpath bool   `json:"in_fastpath"`
	Reason     string `json:"reason"`
}

// Cut is the cut that holds the connection.
type Cut struct {
	Trigger    string `json:"trigger"`
	Reason     string `json:"reason,omitempty"`
	InFastpath bool   `json:"in_fastpath"`
}

// PPE is the offload engine's own entry for the flow.
type PPE struct {
	Engine string `json:"engine"`          // "MediaTek PPE"
	State  string `json:"state,omitempty"` // BND, UNB, FIN; "" no entry found
	Table  string `json:"table,omitempty"` // ppe0
	Error  string `json:"error,omitempty"` // the table could not be read
}

// Where a connection is now.
const (
	WhereHardware = "hardware"
	WhereSoftware = "software"
	WhereSlow     = "slow path"
	WhereCut      = "cut"
)

// Answer is what `why` says about one connection.
type Answer struct {
	Flow    netstate.Flow `json:"flow"`
	Where   string        `json:"where"`
	Summary string        `json:"summary"`
	Reasons []Reason      `json:"reasons"`
	Sides   [2]Side       `json:"sides"`
}

// Reason is one cause, in the order the kernel meets it.
type Reason struct {
	Code string `json:"code"` // stable: cut, local, offload-off, other-flowtable, proto, accounting, packets, tcp-closing, tcp-handshake, tcp-assured, helper, seqadj, nat-clash, no-route, tunnel, device, device-maybe, hw-tunnel, wed-off, hw-wifi, hw-pending, ppe, unexplained
	// Blocks: the kernel skips the flow for it; false: a likely cause
	// the facts cannot settle.
	Blocks   bool   `json:"blocks"`
	Text     string `json:"text"`
	Evidence string `json:"evidence"`
	Fix      string `json:"fix,omitempty"`
}

// Explain tells where the connection is and why it is not offloaded.
func Explain(f Facts) Answer {
	fl := f.Entry.Flow
	a := Answer{Flow: fl, Where: where(f), Sides: f.Sides, Reasons: []Reason{}}
	add := func(r Reason) { a.Reasons = append(a.Reasons, r) }
	conn := connText(fl)
	if f.Cut != nil {
		how := "its frames are dropped at ingress, before the flowtable"
		if !f.Cut.InFastpath {
			how = "its conntrack entry was deleted (the cut sets were full or cut_in_fastpath is off)"
		}
		evidence := "cut by " + strings.TrimSpace(f.Cut.Trigger+" "+f.Cut.Reason)
		if f.NoConntrack {
			evidence += "; conntrack holds no entry for it (the cut deleted it)"
		}
		add(Reason{Code: "cut", Blocks: true, Text: "cut: " + how, Evidence: evidence,
			Fix: "fastpath uncut " + conn + " (a block list's cut lasts while the list holds the address)"})
		if f.NoConntrack {
			a.Summary = summary(a)
			return a
		}
	}
	if f.Local != "" {
		add(Reason{Code: "local", Blocks: true,
			Text:     "the router itself is an end: its packets go to input and output, never through the forward hook where flows are offloaded",
			Evidence: f.Local + " is the router's own address",
			Fix:      "none: only forwarded connections can be offloaded"})
	}
	offloaded := fl.Offload != ""
	if !f.Offload.Flowtable && offloaded {
		add(Reason{Code: "other-flowtable", Blocks: false,
			Text:     "the flowtable is another one (firewall4's own, with flow_offloading on): fastpath has none in the kernel",
			Evidence: "conntrack status " + statusText(f.Entry.Status) + "; mode " + orNone(f.Offload.Mode) + "; table inet fastpath holds no flowtable and rule",
			Fix:      "fastpath status says why fastpath's flowtable is missing"})
	} else if !f.Offload.Flowtable {
		fix := "fastpath set software (or hardware), then fastpath status"
		if f.Offload.Mode != "off" && f.Offload.Mode != "" {
			fix = "fastpath status says why the flowtable is missing; fastpath reload"
		}
		add(Reason{Code: "offload-off", Blocks: true,
			Text:     "offload is off: the kernel has no fastpath flowtable with its flow add rule",
			Evidence: "mode " + orNone(f.Offload.Mode) + "; table inet fastpath holds no flowtable and rule",
			Fix:      fix})
	}
	if !offloaded {
		a.Reasons = append(a.Reasons, evalReasons(f)...)
	}
	if f.Local == "" {
		a.Reasons = append(a.Reasons, deviceReasons(f)...)
	}
	a.Reasons = append(a.Reasons, hardwareReasons(f)...)
	if a.Where == WhereSlow && !anyBlocks(a.Reasons) {
		add(Reason{Code: "unexplained", Blocks: false,
			Text: "every condition fastpath can read holds, yet the flow is in the slow path",
			Evidence: "conntrack: " + entryText(f.Entry) + "; both ends' devices are in the flowtable. " +
				"The kernel also skips packets with IPv4 options or from IPsec, a rule before fastpath's chain (firewall4's raw or mangle prerouting, mangle_forward) can drop or divert them, " +
				"and a flow torn down (30 s without packets, a route change, a device going down) waits for its next packet",
			Fix: "ask again in a few seconds; if it stays, compare `nft list ruleset` chains on prerouting and forward before priority filter - 1"})
	}
	a.Summary = summary(a)
	return a
}

func where(f Facts) string {
	switch {
	case f.Cut != nil:
		return WhereCut
	case f.Entry.Flow.Offload == "hardware":
		return WhereHardware
	case f.Entry.Flow.Offload == "software":
		return WhereSoftware
	}
	return WhereSlow
}

// evalReasons are the rule's matches and nft_flow_offload_eval's checks
// up to the route, in their order.
func evalReasons(f Facts) []Reason {
	var out []Reason
	fl, st := f.Entry.Flow, f.Entry.Status
	if fl.Proto != "tcp" && fl.Proto != "udp" {
		out = append(out, Reason{Code: "proto", Blocks: true,
			Text:     fmt.Sprintf("%s is not TCP or UDP: the flowtable forwards TCP and UDP only (the kernel also takes GRE version 0 without NAT, which fastpath's rule does not pass)", strings.ToUpper(orNone(fl.Proto))),
			Evidence: "conntrack protocol " + orNone(fl.Proto),
			Fix:      "none: such packets always take the slow path"})
		return out // the rule stops here; nothing below is asked
	}
	if n := f.Offload.AfterPkts; n > 0 {
		if f.Offload.Accounting != nil && !*f.Offload.Accounting {
			out = append(out, Reason{Code: "accounting", Blocks: true,
				Text:     fmt.Sprintf("conntrack accounting is off, so `ct packets >= %d` reads 0 and never matches", n),
				Evidence: "net.netfilter.nf_conntrack_acct = 0; offload_after_packets " + fmt.Sprint(n),
				Fix:      "sysctl -w net.netfilter.nf_conntrack_acct=1 (new connections count), or set offload_after_packets to 0"})
		} else if fl.Packets < n {
			out = append(out, Reason{Code: "packets", Blocks: true,
				Text:     fmt.Sprintf("fewer packets than offload_after_packets: the rule offloads a connection once it has %d (both directions counted)", n),
				Evidence: packetsText(fl.Packets) + " so far",
				Fix:      "wait for more packets, or lower offload_after_packets in /etc/config/fastpath (LuCI: Settings)"})
		}
	}
	if fl.Proto == "tcp" {
		switch {
		case closing(fl.State):
			out = append(out, Reason{Code: "tcp-closing", Blocks: true,
				Text:     "the connection is closing: a FIN or RST took it out of the flowtable, and the kernel offloads only ESTABLISHED connections",
				Evidence: "TCP state " + fl.State,
				Fix:      "none: the connection ends in the slow path"})
		case fl.State != "ESTABLISHED":
			out = append(out, Reason{Code: "tcp-handshake", Blocks: true,
				Text:     "the TCP handshake has not finished: the kernel offloads only ESTABLISHED connections",
				Evidence: "TCP state " + orNone(fl.State) + seenText(st),
				Fix:      "none: it is offloaded with its first packet after the handshake, if it finishes"})
		case st&netstate.StatusAssured == 0:
			out = append(out, Reason{Code: "tcp-assured", Blocks: true,
				Text:     "not yet seen both ways: the kernel offloads a TCP connection once conntrack marked it ASSURED",
				Evidence: "TCP state ESTABLISHED, status without ASSURED" + seenText(st),
				Fix:      "none if replies follow; a one-way TCP stream (asymmetric routing) is never offloaded: route both directions through this router"})
		}
	}
	if f.Entry.Helper != "" || st&netstate.StatusHelper != 0 {
		name := f.Entry.Helper
		if name == "" {
			name = "a helper (IPS_HELPER)"
		}
		out = append(out, Reason{Code: "helper", Blocks: true,
			Text:     "a conntrack helper is attached: the kernel never offloads a connection a helper must watch (FTP, SIP, PPTP, H.323, TFTP, IRC, ...)",
			Evidence: "helper " + name,
			Fix:      "none while the helper is wanted; without it: firewall zone option helper, or auto_helper '0' in the firewall defaults, or remove the kmod-nf-nathelper package that brings it"})
	}
	if st&netstate.StatusSeqAdjust != 0 {
		out = append(out, Reason{Code: "seqadj", Blocks: true,
			Text:     "the kernel adjusts its TCP sequence numbers (a NAT helper changed the payload's length, or synproxy), which the flowtable cannot",
			Evidence: "status SEQ_ADJUST",
			Fix:      "none for this connection; without the helper or synproxy new ones can be offloaded"})
	}
	if st&netstate.StatusNATClash != 0 {
		out = append(out, Reason{Code: "nat-clash", Blocks: true,
			Text:     "the entry lost a NAT clash (two packets of the same tuple raced through NAT, often DNS over UDP): the kernel never offloads it",
			Evidence: "status NAT_CLASH",
			Fix:      "none: it expires on its own"})
	}
	return out
}

// deviceReasons are nft_flow_route's: the route to each end and whether
// the flowtable hooks the device its frames enter on.
func deviceReasons(f Facts) []Reason {
	var out []Reason
	if !f.Offload.Flowtable {
		return nil
	}
	listed := func(d string) bool { return slices.Contains(f.Offload.Devices, d) }
	for i, s := range f.Sides {
		from := sideName(i, s)
		switch {
		case s.Error != "":
			out = append(out, Reason{Code: "no-route", Blocks: true,
				Text:     "no route toward " + from + ": the kernel needs one both ways to offload",
				Evidence: s.Error,
				Fix:      "check `ip route get " + s.Address + "`"})
			continue
		case s.Device == "":
			continue
		case listed(s.Device):
			continue
		case s.Tunnel != nil && !s.Tunnel.InFastpath:
			out = append(out, Reason{Code: "tunnel", Blocks: true,
				Text:     fmt.Sprintf("the frames from %s come through tunnel %s (%s), which the flowtable cannot follow", from, s.Device, s.Tunnel.Kind),
				Evidence: s.Tunnel.Reason + " (" + s.From + ")",
				Fix:      "none on this kernel: fastpath print lists which tunnels take the fast path"})
			continue
		case s.Tunnel != nil && s.Tunnel.Underlay != "" && listed(s.Tunnel.Underlay):
			continue
		case s.Tunnel != nil:
			// The flowtable finds a tunnel's flows where its frames enter:
			// on the underlay, never the tunnel device.
			out = append(out, Reason{Code: "device", Blocks: true,
				Text:     fmt.Sprintf("the frames from %s come through tunnel %s, whose underlay %s the flowtable does not list", from, s.Device, orNone(s.Tunnel.Underlay)),
				Evidence: fmt.Sprintf("%s; flowtable devices: %s", s.Tunnel.Reason, list(f.Offload.Devices)),
				Fix:      "fastpath reload (the plan lists a followed tunnel's underlay); fastpath print says why it does not"})
			continue
		}
		var in, out2 []string
		wifi := s.Kind == "wireless"
		for _, p := range s.Enter {
			if listed(p.Name) {
				in = append(in, p.Name)
			} else {
				out2 = append(out2, p.Name)
				wifi = wifi || p.Kind == "wireless"
			}
		}
		if len(s.Enter) > 0 && len(out2) == 0 {
			continue // every device its frames can enter on is hooked
		}
		what := "the device " + s.Device
		if wifi {
			what = "the Wi-Fi device " + s.Device
		}
		fix := "uci add_list fastpath.main.device=" + s.Device + "; uci commit fastpath; fastpath reload"
		if slices.Contains(f.Offload.Planned, s.Device) {
			fix = "the plan lists it but the kernel's flowtable does not yet: fastpath reload"
		}
		evidence := fmt.Sprintf("route toward %s: %s (%s); flowtable devices: %s", s.Address, s.Device, s.From, list(f.Offload.Devices))
		if len(in) > 0 {
			// Some ports are hooked: which one this end is behind needs
			// the bridge's forwarding database, which is not read.
			out = append(out, Reason{Code: "device-maybe", Blocks: false,
				Text:     fmt.Sprintf("if %s is behind %s, its frames enter on a device the flowtable does not list and that direction stays in the slow path", from, strings.Join(out2, ", ")),
				Evidence: evidence + "; of " + s.Device + "'s ports listed: " + strings.Join(in, ", ") + "; not: " + strings.Join(out2, ", "),
				Fix:      "uci add_list fastpath.main.device=" + out2[0] + "; uci commit fastpath; fastpath reload"})
			continue
		}
		if len(out2) > 0 {
			what += " (frames enter on " + strings.Join(out2, ", ") + ")"
		}
		out = append(out, Reason{Code: "device", Blocks: true,
			Text:     fmt.Sprintf("the frames from %s enter on %s, which is not in the flowtable: that direction never meets the flowtable's hook", from, what),
			Evidence: evidence,
			Fix:      fix})
	}
	return out
}

// hardwareReasons are why a flow of a hardware flowtable is not (or not
// really) in the offload engine.
func hardwareReasons(f Facts) []Reason {
	if f.Offload.Mode != "hardware" || !f.Offload.Flowtable || f.Local != "" || f.Cut != nil {
		return nil
	}
	fl := f.Entry.Flow
	var out []Reason
	if fl.Offload == "software" {
		for i, s := range f.Sides {
			from := sideName(i, s)
			switch {
			case s.Tunnel != nil:
				out = append(out, Reason{Code: "hw-tunnel", Blocks: true,
					Text:     "not in hardware: no driver offloads a tunnel's flows",
					Evidence: fmt.Sprintf("%s is behind tunnel %s (%s)", from, s.Device, s.Tunnel.Kind),
					Fix:      "none: the software flowtable forwards it"})
			case wifiOf(s) != "":
				dev, certain := wifiOf(s), s.Kind == "wireless"
				on := fmt.Sprintf("%s is on Wi-Fi (%s)", from, dev)
				if !certain {
					on = fmt.Sprintf("%s may be on Wi-Fi (%s, a port of %s)", from, dev, s.Device)
				}
				soc := strings.ToLower(f.Offload.SoC)
				if (soc == "mt7981" || soc == "mt7986") && f.Offload.WED != nil && !*f.Offload.WED {
					out = append(out, Reason{Code: "wed-off", Blocks: certain,
						Text:     "not in hardware: on " + strings.ToUpper(soc) + " Wi-Fi flows reach the PPE only through WED, which is off",
						Evidence: on + "; mt7915e wed_enable=N",
						Fix:      "echo 'options mt7915e wed_enable=Y' >> /etc/modules.conf, then reboot"})
				} else {
					out = append(out, Reason{Code: "hw-wifi", Blocks: false,
						Text:     "not in hardware: the offload engine binds a Wi-Fi flow only where the Wi-Fi driver hands it frames (MediaTek WED)",
						Evidence: on + "; SoC " + orNone(f.Offload.SoC),
						Fix:      "none on this SoC, or turn WED on where the driver has it"})
				}
			}
		}
		if len(out) == 0 {
			out = append(out, Reason{Code: "hw-pending", Blocks: false,
				Text:     "not in hardware: the driver has not bound it (yet); a flow is bound once its packets keep coming",
				Evidence: "conntrack status OFFLOAD without HW_OFFLOAD",
				Fix:      "ask again in a few seconds; fastpath status shows how many flows the engine holds"})
		}
	}
	if p := f.PPE; p != nil && fl.Offload != "" {
		switch {
		case p.Error != "":
			out = append(out, Reason{Code: "ppe", Blocks: false, Text: "the offload engine's table could not be read", Evidence: p.Error})
		case p.State == "BND" && fl.Offload == "hardware":
			// Bound: the proof; said in the summary.
		case p.State == "":
			out = append(out, Reason{Code: "ppe", Blocks: fl.Offload == "hardware",
				Text:     p.Engine + " has no entry for the flow: its packets are forwarded by the software flowtable",
				Evidence: "no entry of its tables (debugfs ppeN/entries) names " + connText(fl) + " in either direction",
				Fix:      "none if it appears within seconds (the driver binds a flow after its packets pass); else fastpath status shows the engine's tables"})
		default:
			out = append(out, Reason{Code: "ppe", Blocks: p.State != "BND",
				Text:     p.Engine + " holds the flow in state " + p.State + ", not bound: the software flowtable forwards it",
				Evidence: p.Table + ": " + p.State,
				Fix:      "none: the driver binds it once its packets keep coming"})
		}
	}
	return out
}

// wifiOf names the Wi-Fi device toward a side: the route's device, else
// a Wi-Fi port of it; "" none.
func wifiOf(s Side) string {
	if s.Kind == "wireless" {
		return s.Device
	}
	for _, p := range s.Enter {
		if p.Kind == "wireless" {
			return p.Name
		}
	}
	return ""
}

func anyBlocks(rs []Reason) bool {
	for _, r := range rs {
		if r.Blocks || r.Code == "device-maybe" {
			return true
		}
	}
	return false
}

func summary(a Answer) string {
	var first, maybe *Reason
	for i := range a.Reasons {
		if a.Reasons[i].Blocks && first == nil {
			first = &a.Reasons[i]
		}
		if !a.Reasons[i].Blocks && maybe == nil {
			maybe = &a.Reasons[i]
		}
	}
	head := map[string]string{WhereCut: "cut", WhereHardware: "offloaded in hardware", WhereSoftware: "offloaded in software", WhereSlow: "slow path"}[a.Where]
	switch {
	case a.Where == WhereCut:
		return "cut: dropped before the flowtable"
	case first != nil && a.Where == WhereSlow:
		return head + ": " + first.Text
	case first != nil:
		return head + ", but " + first.Text
	case maybe != nil:
		return head + "; perhaps " + maybe.Text
	}
	return head
}

// closing names the TCP states after a FIN or RST (enum tcp_conntrack).
func closing(state string) bool {
	switch state {
	case "FIN_WAIT", "CLOSE_WAIT", "LAST_ACK", "TIME_WAIT", "CLOSE":
		return true
	}
	return false
}

func seenText(st uint32) string {
	if st&netstate.StatusSeenReply == 0 {
		return "; no reply seen yet"
	}
	return "; a reply seen"
}

func packetsText(n uint64) string {
	if n == 1 {
		return "1 packet"
	}
	return fmt.Sprintf("%d packets", n)
}

func sideName(i int, s Side) string {
	if i == 0 {
		return "the source " + s.Address
	}
	return "the destination " + s.Address
}

// connText writes the connection as the CLI takes it.
func connText(fl netstate.Flow) string {
	t := fl.Original
	return fmt.Sprintf("%s:%s:%d:%s:%d", t.Proto, bracket(t.Src), t.SrcPort, bracket(t.Dst), t.DstPort)
}

func bracket(a string) string {
	if strings.Contains(a, ":") {
		return "[" + a + "]"
	}
	return a
}

func entryText(e netstate.Entry) string {
	s := e.Flow.Proto
	if e.Flow.State != "" {
		s += " " + e.Flow.State
	}
	return s + ", " + packetsText(e.Flow.Packets) + ", status " + statusText(e.Status)
}

// statusText names the set status bits as conntrack -L does.
func statusText(st uint32) string {
	names := []struct {
		bit  uint32
		name string
	}{
		{netstate.StatusExpected, "EXPECTED"}, {netstate.StatusSeenReply, "SEEN_REPLY"}, {netstate.StatusAssured, "ASSURED"},
		{netstate.StatusConfirmed, "CONFIRMED"}, {netstate.StatusSrcNAT, "SRC_NAT"}, {netstate.StatusDstNAT, "DST_NAT"},
		{netstate.StatusSeqAdjust, "SEQ_ADJUST"}, {netstate.StatusDying, "DYING"}, {netstate.StatusNATClash, "NAT_CLASH"},
		{netstate.StatusHelper, "HELPER"}, {netstate.StatusOffload, "OFFLOAD"}, {netstate.StatusHWOffload, "HW_OFFLOAD"},
	}
	var out []string
	for _, n := range names {
		if st&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ",")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func list(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}
