package rpc

import (
	"fmt"
	"math"
	"net/netip"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/ubus"
)

// Modes `set` accepts.
var setModes = []string{"off", "software", "hardware", "auto"}

// argString returns a string argument; ubus has already checked its type
// against the signature, the check here keeps the parser safe on its own.
func argString(t ubus.Table, name string) (string, bool, error) {
	v, ok := t.Get(name)
	if !ok || v == nil {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", false, &ArgumentError{name, fmt.Sprintf("must be a string, got %v", v), fmt.Sprintf(`pass e.g. {"%s": "text"}`, name)}
	}
	return strings.TrimSpace(s), true, nil
}

func argInt(t ubus.Table, name string) (int64, bool, error) {
	v, ok := t.Get(name)
	if !ok || v == nil {
		return 0, false, nil
	}
	switch n := v.(type) {
	case int16:
		return int64(n), true, nil
	case int32:
		return int64(n), true, nil
	case int64:
		return n, true, nil
	}
	return 0, false, &ArgumentError{name, fmt.Sprintf("must be an integer, got %v", v), fmt.Sprintf(`pass e.g. {"%s": 10}`, name)}
}

func oneOf(field, value string, allowed []string, what string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return &ArgumentError{field, fmt.Sprintf("%q is not %s", value, what), "use " + orList(allowed)}
}

func orList(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// parseFlowQuery checks the `flows` filters.
func parseFlowQuery(t ubus.Table) (FlowQuery, error) {
	var q FlowQuery
	var err error
	if q.Offload, _, err = argString(t, "offload"); err != nil {
		return q, err
	}
	if q.Offload != "" {
		if err := oneOf("offload", q.Offload, []string{"any", "software", "hardware", "none"}, "an offload filter"); err != nil {
			return q, err
		}
	}
	if q.Proto, _, err = argString(t, "proto"); err != nil {
		return q, err
	}
	if q.Proto != "" {
		q.Proto = strings.ToLower(q.Proto)
		if err := oneOf("proto", q.Proto, []string{"tcp", "udp", "icmp", "icmpv6"}, "a protocol fastpath lists"); err != nil {
			return q, err
		}
	}
	if q.Address, _, err = argString(t, "address"); err != nil {
		return q, err
	}
	if q.Address != "" {
		if err := checkAddressOrCIDR("address", q.Address); err != nil {
			return q, err
		}
	}
	limit, given, err := argInt(t, "limit")
	if err != nil {
		return q, err
	}
	q.Limit = DefaultFlowLimit
	if given {
		if limit < 1 || limit > MaxFlowLimit {
			return q, &ArgumentError{"limit", fmt.Sprintf("%d is out of range", limit),
				fmt.Sprintf("use 1 to %d (default %d)", MaxFlowLimit, DefaultFlowLimit)}
		}
		q.Limit = int(limit)
	}
	return q, nil
}

// parsePage checks a page's offset (0 and up) and limit (1..max).
func parsePage(t ubus.Table, def, max int) (offset, limit int, err error) {
	off, _, err := argInt(t, "offset")
	if err != nil {
		return 0, 0, err
	}
	if off < 0 || off > math.MaxInt32 {
		return 0, 0, &ArgumentError{"offset", fmt.Sprintf("%d is out of range", off), "use 0 (the first item) or more"}
	}
	n, given, err := argInt(t, "limit")
	if err != nil {
		return 0, 0, err
	}
	if !given {
		return int(off), def, nil
	}
	if n < 1 || n > int64(max) {
		return 0, 0, &ArgumentError{"limit", fmt.Sprintf("%d is out of range", n), fmt.Sprintf("use 1 to %d (default %d)", max, def)}
	}
	return int(off), int(n), nil
}

func checkAddressOrCIDR(field, s string) error {
	if _, err := netip.ParseAddr(s); err == nil {
		return nil
	}
	if _, err := netip.ParsePrefix(s); err == nil {
		return nil
	}
	return &ArgumentError{field, fmt.Sprintf("%q is not an IP address or CIDR", s), "use e.g. 192.0.2.7, 192.0.2.0/24 or 2001:db8::/64"}
}

// parseMode checks `set`'s mode.
func parseMode(t ubus.Table) (string, error) {
	mode, given, err := argString(t, "mode")
	if err != nil {
		return "", err
	}
	if !given || mode == "" {
		return "", &ArgumentError{"mode", "missing", `pass one of off, software, hardware or auto, e.g. {"mode": "software"}`}
	}
	mode = strings.ToLower(mode)
	if err := oneOf("mode", mode, setModes, "a mode"); err != nil {
		return "", err
	}
	return mode, nil
}

// parseCutRequest checks `cut` and `uncut`: an address or a 5-tuple.
func parseCutRequest(t ubus.Table) (CutRequest, error) {
	r := CutRequest{Trigger: "ubus"}
	var err error
	if r.Reason, _, err = argString(t, "reason"); err != nil {
		return r, err
	}
	for _, o := range []struct {
		name string
		to   *bool
	}{{"force", &r.Options.Force}, {"local", &r.Options.Local}} {
		if v, ok := t.Get(o.name); ok && v != nil {
			b, isBool := v.(bool)
			if !isBool {
				return r, &ArgumentError{o.name, fmt.Sprintf("must be a boolean, got %v", v), fmt.Sprintf(`pass e.g. {"%s": true}`, o.name)}
			}
			*o.to = b
		}
	}
	if r.Address, err = namedAddress(t, "192.0.2.7"); err != nil || r.Address != "" {
		return r, err
	}
	r.Tuple, err = parseTuple(t)
	return r, err
}

// namedAddress reads the address (IP or CIDR) a call names its
// connections by; "" when it names them by a 5-tuple instead, which the
// caller reads. Both, or neither, is an error; example is the address the
// error's fix shows.
func namedAddress(t ubus.Table, example string) (string, error) {
	addr, hasAddr, err := argString(t, "address")
	if err != nil {
		return "", err
	}
	anyTuple := false
	for _, f := range []string{"proto", "src", "dst", "sport", "dport"} {
		if v, ok := t.Get(f); ok && v != nil {
			anyTuple = true
		}
	}
	switch {
	case hasAddr && addr != "" && anyTuple:
		return "", &ArgumentError{"address", "given together with a 5-tuple", "pass either address or proto, src, dst, sport and dport"}
	case hasAddr && addr != "":
		return addr, checkAddressOrCIDR("address", addr)
	case !anyTuple:
		return "", &ArgumentError{"address", "missing", `pass an address {"address": "` + example + `"} or a 5-tuple {"proto": "tcp", "src": ..., "dst": ..., "sport": ..., "dport": ...}`}
	}
	return "", nil
}

// parseTuple checks a complete 5-tuple: proto tcp|udp, two addresses of
// one family, ports 1-65535.
func parseTuple(t ubus.Table) (cut.Tuple, error) {
	var tu cut.Tuple
	const need = "a 5-tuple needs proto, src, dst, sport and dport"
	proto, ok, err := argString(t, "proto")
	if err != nil {
		return tu, err
	}
	if !ok || proto == "" {
		return tu, &ArgumentError{"proto", "missing", need}
	}
	tu.Proto = strings.ToLower(proto)
	if err := oneOf("proto", tu.Proto, []string{"tcp", "udp"}, "a protocol that can be cut"); err != nil {
		return tu, err
	}
	var addrs [2]netip.Addr
	for i, f := range []string{"src", "dst"} {
		s, ok, err := argString(t, f)
		if err != nil {
			return tu, err
		}
		if !ok || s == "" {
			return tu, &ArgumentError{f, "missing", need}
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return tu, &ArgumentError{f, fmt.Sprintf("%q is not an IP address", s), "use one address such as 192.0.2.7 or 2001:db8::7 (no CIDR in a 5-tuple)"}
		}
		addrs[i] = a.Unmap()
	}
	if addrs[0].Is4() != addrs[1].Is4() {
		return tu, &ArgumentError{"dst", fmt.Sprintf("%s and src %s are of different families", addrs[1], addrs[0]), "use two IPv4 or two IPv6 addresses"}
	}
	tu.Src, tu.Dst = addrs[0].String(), addrs[1].String()
	var ports [2]uint16
	for i, f := range []string{"sport", "dport"} {
		p, ok, err := argInt(t, f)
		if err != nil {
			return tu, err
		}
		if !ok {
			return tu, &ArgumentError{f, "missing", need}
		}
		if p < 1 || p > 65535 {
			return tu, &ArgumentError{f, fmt.Sprintf("%d is not a port", p), "use 1 to 65535"}
		}
		ports[i] = uint16(p)
	}
	tu.SrcPort, tu.DstPort = ports[0], ports[1]
	return tu, nil
}

// parseVerdict checks `verdict`: a 5-tuple, drop|forward and a reason.
func parseVerdict(t ubus.Table) (VerdictRequest, error) {
	r := VerdictRequest{Trigger: "ubus"}
	v, ok, err := argString(t, "verdict")
	if err != nil {
		return r, err
	}
	if !ok || v == "" {
		return r, &ArgumentError{"verdict", "missing", `pass "drop" (cut the connection) or "forward" (release it)`}
	}
	if err := oneOf("verdict", strings.ToLower(v), []string{string(cut.VerdictDrop), string(cut.VerdictForward)}, "a verdict"); err != nil {
		return r, err
	}
	r.Verdict = cut.Verdict(strings.ToLower(v))
	if r.Reason, _, err = argString(t, "reason"); err != nil {
		return r, err
	}
	r.Tuple, err = parseTuple(t)
	return r, err
}
