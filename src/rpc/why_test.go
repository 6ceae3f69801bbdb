package rpc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/ubus"
	"github.com/fastpath-wrt/fastpath/src/why"
)

// Why answers with one explanation per flow of the fake that the query
// names, as many as whyCount when set (a router with many connections).
func (f *fakeController) Why(_ context.Context, q WhyQuery) ([]why.Answer, int, error) {
	if err := f.record("why"); err != nil {
		return nil, 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastWhy = q
	var out []why.Answer
	n := f.whyCount
	for i := 0; i < n; i++ {
		fl := f.flows[0]
		fl.ID = uint32(i + 1)
		out = append(out, why.Explain(why.Facts{Entry: netstate.Entry{Flow: fl, Status: netstate.StatusAssured}, Offload: why.Offload{Mode: "software", Flowtable: true, AfterPkts: 1 << 40}}))
	}
	if n == 0 {
		for _, fl := range f.flows {
			if (q.Address != "" && FlowQuery{Address: q.Address}.Match(fl)) || (q.Address == "" && fl.Original.Equal(q.Tuple)) {
				out = append(out, why.Explain(why.Facts{Entry: netstate.Entry{Flow: fl}, Offload: why.Offload{Mode: "software", Flowtable: true}}))
			}
		}
	}
	total := len(out)
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, total, nil
}

func TestWhyAnswers(t *testing.T) {
	h := start(t)
	cases := []struct {
		args string
		want []string // fragments of the JSON answer, in order
	}{
		{`{"address":"192.168.1.23"}`, []string{`{"connections":[{"flow":{"id":1,`, `"where":"software"`, `"summary":"offloaded in software"`, `"total":1,"limit":20,"truncated":false}`}},
		{`{"proto":"tcp","src":"192.168.1.23","sport":51234,"dst":"93.184.216.34","dport":443,"limit":5}`, []string{`"id":1`, `"total":1,"limit":5,`}},
		{`{"address":"2001:db8::/32"}`, []string{`"proto":"udp"`, `"where":"slow path"`, `"reasons":[`, `"code":"unexplained"`}},
		{`{"address":"203.0.113.1"}`, []string{`{"connections":[],"total":0,"limit":20,"truncated":false}`}},
	}
	for _, c := range cases {
		got, err := h.call(t, "why", c.args)
		if err != nil {
			t.Errorf("why %s: %v", c.args, err)
			continue
		}
		at := 0
		for _, w := range c.want {
			i := strings.Index(got[at:], w)
			if i < 0 {
				t.Errorf("why %s:\n%s\nlacks (after byte %d) %s", c.args, got, at, w)
				break
			}
			at += i + len(w)
		}
	}
	if q := h.fake.lastWhy; q.Tuple.DstPort != 0 {
		t.Errorf("an address query passed a tuple: %+v", q)
	}
}

// However many connections an address names, the answer holds at most
// the limit and fits in one ubus message.
func TestWhyAnswerBounds(t *testing.T) {
	h := start(t)
	h.fake.mu.Lock()
	h.fake.whyCount = 3000
	h.fake.mu.Unlock()
	got, err := h.call(t, "why", fmt.Sprintf(`{"address":"192.168.1.0/24","limit":%d}`, MaxWhyLimit))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > ubus.MaxMessageLen {
		t.Errorf("answer of %d bytes, over ubus's %d", len(got), ubus.MaxMessageLen)
	}
	for _, w := range []string{`"total":3000`, `"limit":1000`} {
		if !strings.Contains(got, w) {
			t.Errorf("answer lacks %s", w)
		}
	}
	if n := strings.Count(got, `"where":`); n > MaxWhyLimit || n == 0 {
		t.Errorf("%d connections explained, want 1..%d", n, MaxWhyLimit)
	}
	if n := strings.Count(got, `"where":`); n < MaxWhyLimit && !strings.Contains(got, `"truncated":true`) {
		t.Errorf("%d of %d connections and no truncated flag", n, MaxWhyLimit)
	}
}

func TestWhyBadArguments(t *testing.T) {
	h := start(t)
	cases := []struct{ args, want string }{
		{``, `address: missing — pass an address`},
		{`{"address":"192.0.2.1","proto":"tcp"}`, `address: given together with a 5-tuple`},
		{`{"address":"192.0.2.300"}`, `address: "192.0.2.300" is not an IP address or CIDR`},
		{`{"address":"192.0.2.1","limit":0}`, `limit: 0 is out of range — use 1 to 1000 (default 20)`},
		{`{"address":"192.0.2.1","limit":1001}`, `limit: 1001 is out of range`},
		{`{"proto":"icmp","src":"192.0.2.1","dst":"192.0.2.2","sport":1,"dport":2}`, `proto: "icmp" has no ports — a 5-tuple names a TCP or UDP connection; for ICMP and other protocols pass the address`},
		{`{"proto":"tcp","src":"192.0.2.1","dst":"192.0.2.2","sport":1}`, `dport: missing — a 5-tuple needs proto, src, dst, sport and dport`},
	}
	for _, c := range cases {
		_, err := h.call(t, "why", c.args)
		var se *ubus.StatusError
		if !errors.As(err, &se) || se.Code != ubus.StatusInvalidArgument || !strings.Contains(err.Error(), c.want) {
			t.Errorf("why %s: %v, want INVALID_ARGUMENT with %q", c.args, err, c.want)
		}
	}
	for _, c := range h.fake.called() {
		if c == "why" {
			t.Errorf("a refused call reached the controller")
		}
	}
}
