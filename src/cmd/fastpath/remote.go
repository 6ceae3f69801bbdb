package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/daemon"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/report"
	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/ubus"
)

const callTimeout = 30 * time.Second

// call asks the running daemon over ubus.
func call(o options, method string, args map[string]any) (ubus.Table, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	return rpc.CallFastpath(ctx, o.socket, method, args)
}

// show prints an answer: as it came (compact JSON, the daemon's key order)
// with --json, through text otherwise.
func show[T any](o options, answer ubus.Table, text func(T) string) int {
	if o.json {
		b, err := ubus.AppendJSON(nil, answer)
		if err != nil {
			return fail("the daemon's answer does not print as JSON: %v", err)
		}
		os.Stdout.Write(append(b, '\n'))
		return 0
	}
	var v T
	if err := ubus.Decode(answer, &v); err != nil {
		return fail("the daemon's answer does not decode: %v", err)
	}
	fmt.Print(text(v))
	return 0
}

func runStatus(args []string) int {
	var o options
	if err := parseNone(newFlags("status", &o, true), args); err != nil {
		return 2
	}
	raw, err := call(o, "status", nil)
	if errors.Is(err, rpc.ErrDaemonNotRunning) {
		fmt.Fprintln(os.Stderr, "fastpath: the daemon is not running; this is the kernel's state beside the plan as it would be made now")
		st, lerr := localStatus(o)
		if lerr != nil {
			return fail("%v", lerr)
		}
		if raw, err = ubus.ToTable(st); err != nil {
			return fail("%v", err)
		}
	} else if err != nil {
		return fail("%v", err)
	}
	return show(o, raw, report.StatusText)
}

type flowsAnswer struct {
	Flows []netstate.Flow `json:"flows"`
	Total int             `json:"total"`
}

func runFlows(args []string) int {
	var o options
	fs := newFlags("flows", &o, true)
	offload := fs.String("offload", "", "only flows offloaded `any`way, in software, in hardware, or none")
	proto := fs.String("proto", "", "only `tcp` or udp flows")
	address := fs.String("address", "", "only flows with an end in `IP` or CIDR")
	limit := fs.Int("limit", rpc.DefaultFlowLimit, "at most `N` flows")
	if err := parseNone(fs, args); err != nil {
		return 2
	}
	q := map[string]any{"limit": *limit}
	for k, v := range map[string]string{"offload": *offload, "proto": *proto, "address": *address} {
		if v != "" {
			q[k] = v
		}
	}
	raw, err := call(o, "flows", q)
	if err != nil {
		return fail("%v", err)
	}
	return show(o, raw, func(a flowsAnswer) string {
		return report.FlowsText(a.Flows) + fmt.Sprintf("%d of %d flows\n", len(a.Flows), a.Total)
	})
}

func runSet(args []string) int {
	var o options
	fs := newFlags("set", &o, true)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		return fail("set needs one mode: off, software, hardware or auto (fastpath set MODE [--root DIR])")
	}
	mode := pos[0]
	raw, err := call(o, "set", map[string]any{"mode": mode})
	if errors.Is(err, rpc.ErrDaemonNotRunning) {
		// Nobody to ask: write UCI, tell procd and apply once ourselves.
		r, rerr := daemon.NewReconciler(o.root, newLog(o))
		if rerr != nil {
			return fail("%v", rerr)
		}
		defer r.Close()
		r.Ubus = o.socket
		notes, werr := r.SetMode(context.Background(), mode)
		for _, n := range notes {
			fmt.Fprintln(os.Stderr, "fastpath:", n)
		}
		if werr != nil {
			return fail("%v", werr)
		}
		st, aerr := r.Reconcile(context.Background())
		if raw, err = ubus.ToTable(st); err != nil {
			return fail("%v", err)
		}
		show(o, raw, report.StatusText)
		if aerr != nil {
			return fail("%v", aerr)
		}
		return 0
	} else if err != nil {
		return fail("%v", err)
	}
	return show(o, raw, report.StatusText)
}

func runReload(args []string) int {
	var o options
	if err := parseNone(newFlags("reload", &o, true), args); err != nil {
		return 2
	}
	raw, err := call(o, "reload", nil)
	if err != nil {
		return fail("%v", err)
	}
	return show(o, raw, report.StatusText)
}

// cutFlags are the ways to name connections: an address, a connection
// written PROTO:SRC:SPORT:DST:DPORT, or the same as flags.
type cutFlags struct {
	proto, src, dst, reason string
	sport, dport            int
	force, local            bool
}

func (c *cutFlags) register(fs *flagSet, withReason bool) {
	fs.StringVar(&c.proto, "proto", "", "`tcp` or udp (with --src, --sport, --dst, --dport: one connection)")
	fs.StringVar(&c.src, "src", "", "source `IP` of the connection")
	fs.StringVar(&c.dst, "dst", "", "destination `IP` of the connection")
	fs.IntVar(&c.sport, "sport", 0, "source `port`")
	fs.IntVar(&c.dport, "dport", 0, "destination `port`")
	if withReason {
		fs.StringVar(&c.reason, "reason", "", "why, for the log and `fastpath cuts`")
	}
}

// flagged tells whether the connection was given as flags.
func (c *cutFlags) flagged() bool {
	return c.proto != "" || c.src != "" || c.dst != "" || c.sport != 0 || c.dport != 0
}

// target is what a positional argument named: an address, or a connection
// written out (conn.Proto set).
type target struct {
	address string
	conn    cut.Tuple
}

// parseTarget reads ADDRESS (IP or CIDR) or PROTO:SRC:SPORT:DST:DPORT.
func parseTarget(s string) (target, error) {
	if isAddress(s) {
		return target{address: s}, nil
	}
	if !strings.Contains(s, ":") {
		return target{}, fmt.Errorf("%q is neither an ADDRESS (IP or CIDR) nor a connection %s", s, connSyntax)
	}
	t, err := parseConn(s)
	return target{conn: t}, err
}

// args are the ubus arguments: the target, or the flags' 5-tuple.
func (c *cutFlags) args(t target) map[string]any {
	a := map[string]any{}
	switch {
	case t.address != "":
		a["address"] = t.address
	case t.conn.Proto != "":
		a["proto"], a["src"], a["dst"], a["sport"], a["dport"] = t.conn.Proto, t.conn.Src, t.conn.Dst, int(t.conn.SrcPort), int(t.conn.DstPort)
	default:
		a["proto"], a["src"], a["dst"], a["sport"], a["dport"] = c.proto, c.src, c.dst, c.sport, c.dport
	}
	if c.reason != "" {
		a["reason"] = c.reason
	}
	if c.force {
		a["force"] = true
	}
	if c.local {
		a["local"] = true
	}
	return a
}

type cutsAnswer struct {
	Cuts          []cut.Cut `json:"cuts"`
	CutsTotal     int       `json:"cuts_total"` // set when the answer holds only the first
	Count         int       `json:"count"`
	ConntrackOnly int       `json:"conntrack_only"`
}

// releasedText is what uncut and a forward verdict answer.
func releasedText(a struct{ Released int }) string {
	if a.Released == 0 {
		return "no cut released: none matched (fastpath cuts lists them)\n"
	}
	if a.Released == 1 {
		return "1 cut released\n"
	}
	return fmt.Sprintf("%d cuts released\n", a.Released)
}

func (a cutsAnswer) text() string {
	s := report.CutsText(a.Cuts)
	if a.CutsTotal > len(a.Cuts) {
		s += fmt.Sprintf("... and %d more cuts (%d in all): fastpath cuts lists them\n", a.CutsTotal-len(a.Cuts), a.CutsTotal)
	}
	if a.ConntrackOnly > 0 {
		s += fmt.Sprintf("%d of %d connections were only removed from conntrack, not dropped in the fast path (the cut sets are full: raise fastpath.main.cut_set_size; or cut_in_fastpath is off); a live connection can carry on\n", a.ConntrackOnly, a.Count)
	}
	return s
}

func runCutLike(name, method string, args []string, withReason bool) int {
	var o options
	var c cutFlags
	fs := newFlags(name, &o, true)
	c.register(fs, withReason)
	if method == "cut" {
		fs.BoolVar(&c.force, "force", false, "cut a prefix shorter than cut_min_prefix4/6 (default /8 and /16)")
		fs.BoolVar(&c.local, "local", false, "cut connections of the router itself too (its SSH, LuCI, DNS)")
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	need := fmt.Sprintf("%s needs one ADDRESS (IP or CIDR) or connection %s, or --proto, --src, --sport, --dst and --dport", name, connSyntax)
	var t target
	switch {
	case len(pos) == 1 && !c.flagged():
		if t, err = parseTarget(pos[0]); err != nil {
			return fail("%s: %v", name, err)
		}
	case len(pos) == 0 && c.flagged():
	default:
		return fail("%s", need)
	}
	raw, err := call(o, method, c.args(t))
	if err != nil {
		return fail("%v", err)
	}
	if method == "uncut" {
		return show(o, raw, releasedText)
	}
	return show(o, raw, cutsAnswer.text)
}

func runCut(args []string) int   { return runCutLike("cut", "cut", args, true) }
func runUncut(args []string) int { return runCutLike("uncut", "uncut", args, false) }

// runVerdict takes `verdict CONN drop|forward` or `verdict drop|forward
// --proto ... --dport N`.
func runVerdict(args []string) int {
	var o options
	var c cutFlags
	fs := newFlags("verdict", &o, true)
	c.register(fs, true)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	need := "verdict needs a connection and drop or forward: fastpath verdict " + connSyntax + " drop|forward, or fastpath verdict drop|forward --proto P --src IP --sport N --dst IP --dport N"
	var verdict string
	var t target
	switch {
	case len(pos) == 2 && !c.flagged():
		verdict = pos[1]
		conn, err := parseConn(pos[0])
		if err != nil {
			return fail("verdict: %v", err)
		}
		t.conn = conn
	case len(pos) == 1 && c.flagged():
		verdict = pos[0]
	default:
		return fail("%s", need)
	}
	if verdict != string(cut.VerdictDrop) && verdict != string(cut.VerdictForward) {
		return fail("verdict: %q is not a verdict: use drop or forward", verdict)
	}
	a := c.args(t)
	a["verdict"] = verdict
	raw, err := call(o, "verdict", a)
	if err != nil {
		return fail("%v", err)
	}
	if verdict == string(cut.VerdictForward) {
		return show(o, raw, releasedText)
	}
	return show(o, raw, cutsAnswer.text)
}

func runCuts(args []string) int {
	var o options
	fs := newFlags("cuts", &o, true)
	offset := fs.Int("offset", 0, "list the cuts from the `N`th on (0: the first)")
	limit := fs.Int("limit", rpc.DefaultCutLimit, "at most `N` cuts")
	if err := parseNone(fs, args); err != nil {
		return 2
	}
	raw, err := call(o, "cuts", map[string]any{"offset": *offset, "limit": *limit})
	if err != nil {
		return fail("%v", err)
	}
	return show(o, raw, func(s cut.Summary) string {
		text := report.CutSummaryText(s)
		if next := *offset + len(s.Cuts); s.CutsTotal > next {
			text += fmt.Sprintf("cuts %d to %d of %d: fastpath cuts --offset %d for the next\n", *offset+1, next, s.CutsTotal, next)
		}
		return text
	})
}
