package rpc

import (
	"net/netip"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/ubus"
)

// FuzzArguments: any JSON arguments either fail with an ArgumentError or
// give requests whose fields hold what the controller may rely on.
func FuzzArguments(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"mode":"software"}`, `{"limit":5,"offload":"any","proto":"udp","address":"10.0.0.0/8"}`,
		`{"address":"2001:db8::1"}`, `{"proto":"tcp","src":"192.0.2.1","dst":"192.0.2.2","sport":1,"dport":65535,"verdict":"drop"}`,
		`{"proto":"udp","src":"::ffff:1.2.3.4","dst":"1.2.3.5","sport":70000,"dport":-1}`, `{"limit":5000000000}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ubus.ParseJSON(b)
		if err != nil {
			return
		}
		tab, ok := v.(ubus.Table)
		if !ok {
			return
		}
		if q, err := parseFlowQuery(tab); err == nil && (q.Limit < 1 || q.Limit > MaxFlowLimit) {
			t.Fatalf("limit %d accepted", q.Limit)
		}
		if r, err := parseCutRequest(tab); err == nil {
			if r.Address == "" {
				checkTuple(t, r.Tuple.Proto, r.Tuple.Src, r.Tuple.Dst, r.Tuple.SrcPort, r.Tuple.DstPort)
			}
		}
		if r, err := parseVerdict(tab); err == nil {
			checkTuple(t, r.Tuple.Proto, r.Tuple.Src, r.Tuple.Dst, r.Tuple.SrcPort, r.Tuple.DstPort)
			if r.Verdict != "drop" && r.Verdict != "forward" {
				t.Fatalf("verdict %q accepted", r.Verdict)
			}
		}
		if m, err := parseMode(tab); err == nil {
			if m != "off" && m != "software" && m != "hardware" && m != "auto" {
				t.Fatalf("mode %q accepted", m)
			}
		}
	})
}

func checkTuple(t *testing.T, proto, src, dst string, sport, dport uint16) {
	if proto != "tcp" && proto != "udp" {
		t.Fatalf("proto %q accepted", proto)
	}
	s, err1 := netip.ParseAddr(src)
	d, err2 := netip.ParseAddr(dst)
	if err1 != nil || err2 != nil || s.Is4() != d.Is4() {
		t.Fatalf("addresses %q %q accepted", src, dst)
	}
	if sport == 0 || dport == 0 {
		t.Fatalf("port 0 accepted")
	}
}
