package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"github.com/fastpath-wrt/fastpath/src/why"
)

// TestIntegrationWhy asks the daemon in a router namespace where a UDP
// flow through it is and why: on a kernel without flowtables offload is
// off; on a flowtable kernel (the VM lab) the flow is offloaded once a
// packet passes fastpath's rule after conntrack confirmed it, so the flow
// keeps sending until then. The devices toward both ends are the kernel's
// routes (lan0, wan0). Once cut, the flow is where a cut puts it.
func TestIntegrationWhy(t *testing.T) {
	ld := startLabDaemon(t, "fpwy", "config fastpath 'main'\n\toption enabled '1'\n")
	flow := ld.udpFlow(t, 40123, 5353)
	conn := fmt.Sprintf("udp:%s:40123:%s:5353", labnet.ClientV4, labnet.ServerV4)
	ask := func() why.Answer {
		t.Helper()
		out, err := exec.Command(buildBinary(t), "why", conn, "--json", "--ubus", ld.sock).Output()
		if err != nil {
			t.Fatalf("fastpath why %s --json: %v\n%s", conn, err, out)
		}
		var a struct {
			Connections []why.Answer `json:"connections"`
			Total       int          `json:"total"`
		}
		if err := json.Unmarshal(out, &a); err != nil || len(a.Connections) != 1 || a.Total != 1 {
			t.Fatalf("fastpath why %s --json: %v, want one connection:\n%s", conn, err, out)
		}
		return a.Connections[0]
	}
	a := ask()
	if expectFlowtable {
		for deadline := time.Now().Add(30 * time.Second); a.Where != why.WhereSoftware && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			flow.Write([]byte("x"))
			a = ask()
		}
		if a.Where != why.WhereSoftware || anyBlocking(a.Reasons) {
			t.Errorf("after 30 s of sending: where %q, reasons %+v; want offloaded in software with nothing blocking", a.Where, a.Reasons)
		}
	} else if a.Where != why.WhereSlow || len(a.Reasons) == 0 || a.Reasons[0].Code != "offload-off" {
		t.Errorf("where %q, reasons %+v; want the slow path, offload off first", a.Where, a.Reasons)
	}
	if a.Sides[0].Device != "lan0" || a.Sides[1].Device != "wan0" {
		t.Errorf("devices toward the ends %q and %q, want lan0 and wan0 (%+v)", a.Sides[0].Device, a.Sides[1].Device, a.Sides)
	}
	if _, err := ld.call("cut", map[string]any{"proto": "udp", "src": labnet.ClientV4, "sport": 40123, "dst": labnet.ServerV4, "dport": 5353, "reason": "test"}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if a = ask(); a.Where == why.WhereCut || time.Now().After(deadline) {
			break
		}
	}
	if a.Where != why.WhereCut || a.Reasons[0].Code != "cut" {
		t.Errorf("after the cut: where %q, reasons %+v", a.Where, a.Reasons)
	}
	// The text names the argument and the fix for a bad one.
	out, err := exec.Command(buildBinary(t), "why", "udp:10.0.0.1:0:10.0.0.2:53", "--ubus", ld.sock).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `SPORT "0" is not a port`) {
		t.Errorf("a bad connection: %v\n%s", err, out)
	}
}

// anyBlocking reports whether a reason is said to keep the flow from offload.
func anyBlocking(rs []why.Reason) bool {
	for _, r := range rs {
		if r.Blocks {
			return true
		}
	}
	return false
}
