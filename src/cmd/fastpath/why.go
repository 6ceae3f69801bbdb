package main

import (
	"fmt"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/why"
)

const whyUsage = "why ADDRESS|PROTO:SRC:SPORT:DST:DPORT [--json] [--limit N]"

type whyAnswer struct {
	Connections []why.Answer `json:"connections"`
	Total       int          `json:"total"`
}

func runWhy(args []string) int {
	var o options
	fs := newFlags("why", &o, true)
	limit := fs.Int("limit", rpc.DefaultWhyLimit, "explain at most `N` connections")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	q, err := whyArgs(pos, *limit)
	if err != nil {
		return fail("%v", err)
	}
	raw, err := call(o, "why", q)
	if err != nil {
		return fail("%v", err)
	}
	return show(o, raw, func(a whyAnswer) string {
		text := why.Text(a.Connections)
		if a.Total > len(a.Connections) {
			text += fmt.Sprintf("\n%d of %d connections: name one (PROTO:SRC:SPORT:DST:DPORT) or raise --limit\n", len(a.Connections), a.Total)
		}
		return text
	})
}

// whyArgs are the ubus arguments of `why`: one ADDRESS (IP or CIDR) or a
// TCP/UDP connection written out, and the limit.
func whyArgs(pos []string, limit int) (map[string]any, error) {
	if len(pos) != 1 {
		return nil, fmt.Errorf("why needs one ADDRESS (IP or CIDR) or connection %s; e.g. fastpath why 192.168.1.23", connSyntax)
	}
	if limit < 1 || limit > rpc.MaxWhyLimit {
		return nil, fmt.Errorf("why: --limit %d is out of range: use 1 to %d (default %d)", limit, rpc.MaxWhyLimit, rpc.DefaultWhyLimit)
	}
	t, err := parseTarget(pos[0])
	if err != nil {
		return nil, fmt.Errorf("why: %v", err)
	}
	a := map[string]any{"limit": limit}
	if t.address != "" {
		a["address"] = t.address
		return a, nil
	}
	if p := t.conn.Proto; p != "tcp" && p != "udp" {
		return nil, fmt.Errorf("why: %q: a connection written out is TCP or UDP (it has ports); for %s give the address, e.g. fastpath why %s", pos[0], strings.ToUpper(p), t.conn.Src)
	}
	a["proto"], a["src"], a["dst"], a["sport"], a["dport"] = t.conn.Proto, t.conn.Src, t.conn.Dst, int(t.conn.SrcPort), int(t.conn.DstPort)
	return a, nil
}
