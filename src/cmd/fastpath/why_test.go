package main

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/why"
)

// The README's why examples and what each asks the daemon.
func init() {
	readmeCalls["why 192.168.1.23"] = []string{"why", `{"address":"192.168.1.23","limit":20,"tuple":{"proto":"","src":"","dst":"","sport":0,"dport":0}}`}
	readmeCalls["why tcp:192.168.1.23:51234:93.184.216.34:443 --json"] = []string{"why", `{"address":"","limit":20,"tuple":{"proto":"tcp","src":"192.168.1.23","dst":"93.184.216.34","sport":51234,"dport":443}}`}
}

func (r *recordingController) Why(_ context.Context, q rpc.WhyQuery) ([]why.Answer, int, error) {
	r.record("why", map[string]any{"address": q.Address, "tuple": q.Tuple, "limit": q.Limit})
	return nil, 0, nil
}

func TestWhyArgs(t *testing.T) {
	for _, c := range []struct {
		pos     []string
		limit   int
		want    map[string]any
		wantErr string
	}{
		{pos: []string{"192.168.1.23"}, limit: 20, want: map[string]any{"address": "192.168.1.23", "limit": 20}},
		{pos: []string{"2001:db8::/64"}, limit: 5, want: map[string]any{"address": "2001:db8::/64", "limit": 5}},
		{pos: []string{"UDP:[fd00::1]:5300:[fd00::53]:53"}, limit: 20,
			want: map[string]any{"proto": "udp", "src": "fd00::1", "dst": "fd00::53", "sport": 5300, "dport": 53, "limit": 20}},
		{pos: nil, limit: 20, wantErr: "why needs one ADDRESS (IP or CIDR) or connection PROTO:SRC:SPORT:DST:DPORT"},
		{pos: []string{"10.0.0.1", "10.0.0.2"}, limit: 20, wantErr: "why needs one ADDRESS"},
		{pos: []string{"router.lan"}, limit: 20, wantErr: `"router.lan" is neither an ADDRESS (IP or CIDR) nor a connection`},
		{pos: []string{"tcp:10.0.0.1:0:10.0.0.2:443"}, limit: 20, wantErr: `SPORT "0" is not a port`},
		{pos: []string{"icmp:10.0.0.1:1:10.0.0.2:1"}, limit: 20, wantErr: "for ICMP give the address, e.g. fastpath why 10.0.0.1"},
		{pos: []string{"10.0.0.1"}, limit: 0, wantErr: "--limit 0 is out of range: use 1 to 1000 (default 20)"},
	} {
		got, err := whyArgs(c.pos, c.limit)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("whyArgs(%q, %d): err %v, want one saying %q", c.pos, c.limit, err, c.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("whyArgs(%q, %d) = %v, %v; want %v", c.pos, c.limit, got, err, c.want)
		}
	}
	// Refused before any daemon is asked: exit status 1, not a hang.
	for _, args := range [][]string{{}, {"example.org"}, {"10.0.0.1", "--limit", "5000"}} {
		if rc := runWhy(append(args, "--ubus", filepath.Join(t.TempDir(), "none.sock"))); rc == 0 {
			t.Errorf("fastpath why %s: exit 0, want an error", strings.Join(args, " "))
		}
	}
}
