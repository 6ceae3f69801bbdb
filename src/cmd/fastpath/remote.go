package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/fastpath-wrt/fastpath/src/config"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/daemon"
	"github.com/fastpath-wrt/fastpath/src/report"
	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/status"
)

const callTimeout = 30 * time.Second

// call asks the running daemon over ubus.
func call(o options, method string, args map[string]any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	return rpc.CallFastpath(ctx, o.socket, method, args)
}

// show prints an answer: as it came with --json, through text otherwise.
func show[T any](o options, raw json.RawMessage, text func(T) string) int {
	if o.json {
		os.Stdout.Write(raw)
		fmt.Println()
		return 0
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return fail("the daemon's answer does not parse: %v", err)
	}
	fmt.Print(text(v))
	return 0
}

func runStatus(args []string) int {
	var o options
	if err := newFlags("status", &o, true).Parse(args); err != nil {
		return 2
	}
	raw, err := call(o, "status", nil)
	if errors.Is(err, rpc.ErrDaemonNotRunning) {
		fmt.Fprintln(os.Stderr, "fastpath: the daemon is not running; this is the kernel's state beside the plan as it would be made now")
		st, lerr := localStatus(o)
		if lerr != nil {
			return fail("%v", lerr)
		}
		if raw, err = json.Marshal(st); err != nil {
			return fail("%v", err)
		}
	} else if err != nil {
		return fail("%v", err)
	}
	return show(o, raw, report.StatusText)
}

type flowsAnswer struct {
	Flows []status.Flow `json:"flows"`
	Total int           `json:"total"`
}

func runFlows(args []string) int {
	var o options
	fs := newFlags("flows", &o, true)
	offload := fs.String("offload", "", "only flows offloaded `any`way, in software, in hardware, or none")
	proto := fs.String("proto", "", "only `tcp` or udp flows")
	address := fs.String("address", "", "only flows with an end in `IP` or CIDR")
	limit := fs.Int("limit", rpc.DefaultFlowLimit, "at most `N` flows")
	if err := fs.Parse(args); err != nil {
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
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		return fail("set needs one mode: off, software, hardware or auto")
	}
	mode := fs.Arg(0)
	raw, err := call(o, "set", map[string]any{"mode": mode})
	if errors.Is(err, rpc.ErrDaemonNotRunning) {
		// Nobody to ask: write UCI and apply once ourselves.
		notes, werr := config.WriteMode(o.root, mode)
		for _, n := range notes {
			fmt.Fprintln(os.Stderr, "fastpath:", n)
		}
		if werr != nil {
			return fail("%v", werr)
		}
		r, rerr := daemon.NewReconciler(o.root, logger(o))
		if rerr != nil {
			return fail("mode written to UCI, but not applied: %v", rerr)
		}
		defer r.Close()
		st, aerr := r.Reconcile(context.Background())
		raw, _ = json.Marshal(st)
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
	if err := newFlags("reload", &o, true).Parse(args); err != nil {
		return 2
	}
	raw, err := call(o, "reload", nil)
	if err != nil {
		return fail("%v", err)
	}
	return show(o, raw, report.StatusText)
}

// cutFlags are the ways to name connections: an address or a 5-tuple.
type cutFlags struct {
	proto, src, dst, reason string
	sport, dport            int
	force, local            bool
}

func (c *cutFlags) register(fs *flag.FlagSet, withReason bool) {
	fs.StringVar(&c.proto, "proto", "", "`tcp` or udp (with --src, --sport, --dst, --dport: one connection)")
	fs.StringVar(&c.src, "src", "", "source `IP` of the connection")
	fs.StringVar(&c.dst, "dst", "", "destination `IP` of the connection")
	fs.IntVar(&c.sport, "sport", 0, "source `port`")
	fs.IntVar(&c.dport, "dport", 0, "destination `port`")
	if withReason {
		fs.StringVar(&c.reason, "reason", "", "why, for the log and `fastpath cuts`")
	}
}

func (c *cutFlags) args(address string) map[string]any {
	a := map[string]any{}
	if address != "" {
		a["address"] = address
	} else {
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
	Cuts []cut.Cut `json:"cuts"`
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
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 1 || (fs.NArg() == 0 && c.proto == "") {
		return fail("%s needs an ADDRESS (IP or CIDR) or --proto, --src, --sport, --dst and --dport", name)
	}
	raw, err := call(o, method, c.args(fs.Arg(0)))
	if err != nil {
		return fail("%v", err)
	}
	if method == "uncut" {
		return show(o, raw, func(a struct{ Released int }) string { return fmt.Sprintf("%d cuts released\n", a.Released) })
	}
	return show(o, raw, func(a cutsAnswer) string { return report.CutsText(a.Cuts) })
}

func runCut(args []string) int   { return runCutLike("cut", "cut", args, true) }
func runUncut(args []string) int { return runCutLike("uncut", "uncut", args, false) }

func runVerdict(args []string) int {
	var o options
	var c cutFlags
	fs := newFlags("verdict", &o, true)
	c.register(fs, true)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		return fail("verdict needs drop or forward, and the connection as --proto, --src, --sport, --dst, --dport")
	}
	a := c.args("")
	a["verdict"] = fs.Arg(0)
	raw, err := call(o, "verdict", a)
	if err != nil {
		return fail("%v", err)
	}
	return show(o, raw, func(a cutsAnswer) string { return report.CutsText(a.Cuts) })
}

func runCuts(args []string) int {
	var o options
	if err := newFlags("cuts", &o, true).Parse(args); err != nil {
		return 2
	}
	raw, err := call(o, "cuts", nil)
	if err != nil {
		return fail("%v", err)
	}
	return show(o, raw, report.CutSummaryText)
}
