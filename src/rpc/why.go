package rpc

import (
	"context"
	"fmt"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/ubus"
	"github.com/fastpath-wrt/fastpath/src/why"
)

// WhyController answers `why`; the daemon's controller implements it.
type WhyController interface {
	// Why explains at most q.Limit of the connections q names and says
	// how many it names in all.
	Why(ctx context.Context, q WhyQuery) (answers []why.Answer, total int, err error)
}

// WhyQuery names the connections to explain: every one with an end in
// Address (an IP or CIDR), or the one of Tuple (either direction).
type WhyQuery struct {
	Address string
	Tuple   cut.Tuple // when Address is empty
	Limit   int       // 1..MaxWhyLimit; DefaultWhyLimit when not given
}

// Limits of the `why` method: an explanation weighs about ten flows.
const (
	DefaultWhyLimit = 20
	MaxWhyLimit     = 1000
)

var whySignature = append([]ubus.Arg{{Name: "address", Type: ubus.TypeString}}, append(tupleArgs[:5:5],
	ubus.Arg{Name: "limit", Type: ubus.TypeInt32})...)

// whyAnswer is the answer of `why`.
type whyAnswer struct {
	Connections []why.Answer `json:"connections"`
	Total       int          `json:"total"` // connections named, explained or not
	Limit       int          `json:"limit"`
	Truncated   bool         `json:"truncated"` // trimmed to fit ubus's message size
}

func (o *Object) why(ctx context.Context, args ubus.Table) (any, error) {
	q, err := parseWhyQuery(args)
	if err != nil {
		return nil, err
	}
	wc, ok := o.ctl.(WhyController)
	if !ok {
		return nil, fmt.Errorf("why: %w", ErrNotSupported)
	}
	answers, total, err := wc.Why(ctx, q)
	if err != nil {
		return nil, err
	}
	if answers == nil {
		answers = []why.Answer{}
	}
	a := whyAnswer{Connections: answers, Total: max(total, len(answers)), Limit: q.Limit}
	if len(a.Connections) > q.Limit {
		a.Connections = a.Connections[:q.Limit]
	}
	return a, nil
}

// parseWhyQuery checks `why`: an address or a TCP/UDP 5-tuple, and a limit.
func parseWhyQuery(t ubus.Table) (WhyQuery, error) {
	q := WhyQuery{Limit: DefaultWhyLimit}
	limit, given, err := argInt(t, "limit")
	if err != nil {
		return q, err
	}
	if given {
		if limit < 1 || limit > MaxWhyLimit {
			return q, &ArgumentError{"limit", fmt.Sprintf("%d is out of range", limit),
				fmt.Sprintf("use 1 to %d (default %d)", MaxWhyLimit, DefaultWhyLimit)}
		}
		q.Limit = int(limit)
	}
	if q.Address, err = namedAddress(t, "192.168.1.23"); err != nil || q.Address != "" {
		return q, err
	}
	if p, _, _ := argString(t, "proto"); p != "" && !strings.EqualFold(p, "tcp") && !strings.EqualFold(p, "udp") {
		return q, &ArgumentError{"proto", fmt.Sprintf("%q has no ports", p), "a 5-tuple names a TCP or UDP connection; for ICMP and other protocols pass the address"}
	}
	q.Tuple, err = parseTuple(t)
	return q, err
}
