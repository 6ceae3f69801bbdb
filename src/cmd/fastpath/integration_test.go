package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/plan"
	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/status"
	"github.com/fastpath-wrt/fastpath/src/ubus"
	"github.com/fastpath-wrt/fastpath/src/ubus/ubustest"
)

// These tests run the real binary in a network namespace of its own (ip
// netns exec remounts /sys, so fastpath sees the namespace's devices).
// On a kernel with flowtables (the VM lab sets FASTPATH_EXPECT_FLOWTABLE=1)
// they expect offload to be set up; without, a clear refusal.

var expectFlowtable = os.Getenv("FASTPATH_EXPECT_FLOWTABLE") == "1"

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: network namespaces and nftables")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip command")
	}
}

// buildBinary compiles fastpath once per test binary run.
func buildBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("FASTPATH_BIN"); p != "" {
		return p
	}
	bin := filepath.Join(t.TempDir(), "fastpath")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// router makes three namespaces — client, router, server — joined by veth
// pairs (client eth0 — lan0 router wan0 — eth0 server), and a UCI root for
// the router whose sys and proc are the real ones.
func router(t *testing.T, firewall string) (ns, root string) {
	t.Helper()
	id := time.Now().UnixNano() % 1e9
	ns = fmt.Sprintf("fp-it-r%d", id)
	client, server := fmt.Sprintf("fp-it-c%d", id), fmt.Sprintf("fp-it-s%d", id)
	for _, n := range []string{ns, client, server} {
		run(t, "ip", "netns", "add", n)
		n := n
		t.Cleanup(func() { exec.Command("ip", "netns", "del", n).Run() })
	}
	for _, l := range [][]string{
		{"-n", ns, "link", "add", "lan0", "type", "veth", "peer", "name", "eth0", "netns", client},
		{"-n", ns, "link", "add", "wan0", "type", "veth", "peer", "name", "eth0", "netns", server},
		{"-n", ns, "addr", "add", "10.0.1.1/24", "dev", "lan0"}, {"-n", ns, "addr", "add", "10.0.2.1/24", "dev", "wan0"},
		{"-n", ns, "link", "set", "lan0", "up"}, {"-n", ns, "link", "set", "wan0", "up"},
		{"-n", client, "addr", "add", "10.0.1.2/24", "dev", "eth0"}, {"-n", client, "link", "set", "eth0", "up"},
		{"-n", client, "route", "add", "default", "via", "10.0.1.1"},
		{"-n", server, "addr", "add", "10.0.2.2/24", "dev", "eth0"}, {"-n", server, "link", "set", "eth0", "up"},
		{"-n", server, "route", "add", "default", "via", "10.0.2.1"},
	} {
		run(t, append([]string{"ip"}, l...)...)
	}
	run(t, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	exec.Command("ip", "netns", "exec", ns, "sysctl", "-qw", "net.netfilter.nf_conntrack_acct=1").Run()
	// A stateful rule, as fw4 has, so conntrack tracks forwarded flows.
	run(t, "ip", "netns", "exec", ns, "nft", "add table inet fw4; add chain inet fw4 forward { type filter hook forward priority filter; policy accept; ct state established,related accept; }")
	root = t.TempDir()
	os.MkdirAll(filepath.Join(root, "etc/config"), 0o755)
	os.Symlink("/sys", filepath.Join(root, "sys"))
	os.Symlink("/proc", filepath.Join(root, "proc"))
	os.WriteFile(filepath.Join(root, "etc/config/firewall"), []byte(firewall), 0o644)
	os.WriteFile(filepath.Join(root, "etc/config/network"), []byte(
		"config interface 'lan'\n\toption device 'lan0'\n\toption proto 'static'\n\n"+
			"config interface 'wan'\n\toption device 'wan0'\n\toption proto 'static'\n"), 0o644)
	return ns, root
}

// stream runs an iperf3 TCP stream from the client through the router for
// the given time, in the background, when iperf3 is there.
func stream(t *testing.T, ns string, seconds int) {
	t.Helper()
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Fatal("iperf3 is needed for traffic through the router (make deps installs it)")
	}
	client, server := strings.Replace(ns, "-r", "-c", 1), strings.Replace(ns, "-r", "-s", 1)
	srv := exec.Command("ip", "netns", "exec", server, "iperf3", "-s", "-1")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	// Listening, not just started: an emulated machine takes its time.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _ := exec.Command("ip", "netns", "exec", server, "ss", "-Hltn", "sport = :5201").Output()
		if len(bytes.TrimSpace(out)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no iperf3 server listening in the server namespace after 10 s")
		}
	}
	cli := exec.Command("ip", "netns", "exec", client, "iperf3", "-c", "10.0.2.2", "-t", fmt.Sprint(seconds), "-b", "50M")
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Process.Kill(); cli.Wait() })
}

func run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestIntegrationApply(t *testing.T) {
	needRoot(t)
	bin := buildBinary(t)
	ns, root := router(t, "config defaults\n\toption flow_offloading '1'\n")
	routesBefore := run(t, "ip", "-n", ns, "route")
	cmd := exec.Command("ip", "netns", "exec", ns, bin, "apply", "--json", "--root", root)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var st status.Status
	if jerr := json.Unmarshal(stdout.Bytes(), &st); jerr != nil {
		t.Fatalf("apply --json printed no status: %v\n%s\n%s", jerr, stdout.String(), stderr.String())
	}
	table, _ := exec.Command("ip", "netns", "exec", ns, "nft", "list", "table", "inet", "fastpath").CombinedOutput()
	if expectFlowtable {
		if err != nil || st.Mode.Effective != plan.ModeSoftware || !st.Flowtable.InSync {
			t.Fatalf("apply on a flowtable kernel: err %v, mode %+v, flowtable %+v\n%s", err, st.Mode, st.Flowtable, stderr.String())
		}
		if !strings.Contains(string(table), "flowtable ft") || !strings.Contains(string(table), "lan0") {
			t.Fatalf("kernel table:\n%s", table)
		}
	} else {
		if err == nil {
			t.Fatal("apply succeeded on a kernel without flowtables")
		}
		if st.Mode.Effective != plan.ModeOff || st.Kernel.Flowtable {
			t.Errorf("status claims offload: mode %+v kernel %+v", st.Mode, st.Kernel)
		}
		if msg := stderr.String(); !strings.Contains(msg, "no flowtable support") || !strings.Contains(msg, "CONFIG_NF_FLOW_TABLE") {
			t.Errorf("the error does not say what is missing: %s", msg)
		}
		if strings.Contains(string(table), "flowtable") {
			t.Errorf("a flowtable was left behind:\n%s", table)
		}
	}
	if after := run(t, "ip", "-n", ns, "route"); after != routesBefore {
		t.Errorf("routes changed:\n%s\nwas\n%s", after, routesBefore)
	}
	// --cleanup leaves nothing of ours.
	run(t, "ip", "netns", "exec", ns, bin, "daemon", "--cleanup", "--root", root)
	if out := run(t, "ip", "netns", "exec", ns, "nft", "list", "tables"); strings.Contains(out, "fastpath") {
		t.Errorf("tables left after --cleanup:\n%s", out)
	}
}

// TestIntegrationDaemonOverUbus runs the daemon against the test broker
// and calls every method of its object as `ubus call fastpath ...` would.
// With FASTPATH_RECORD=DIR it writes the answers there (the LuCI app's
// tests read them).
func TestIntegrationDaemonOverUbus(t *testing.T) {
	needRoot(t)
	bin := buildBinary(t)
	ns, root := router(t, "config defaults\n\toption flow_offloading '1'\n\toption flow_offloading_hw '1'\n")
	sock := filepath.Join(t.TempDir(), "ubus.sock")
	broker, err := ubustest.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := exec.CommandContext(ctx, "ip", "netns", "exec", ns, bin, "daemon", "--root", root, "--ubus", sock)
	var logs bytes.Buffer
	d.Stderr = &logs
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); d.Wait() }()

	callJSON := func(method string, args map[string]any) (json.RawMessage, error) {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		return answerJSON(rpc.CallFastpath(cctx, sock, method, args))
	}
	// An emulated machine takes seconds for the first pass.
	st, err := waitFirstPass(func() (json.RawMessage, error) { return callJSON("status", nil) }, 60*time.Second, nil)
	if err != nil {
		t.Fatalf("status over ubus: %v\ndaemon log:\n%s", err, logs.String())
	}
	var raw json.RawMessage
	// Requested reads software once the pass has set flow_offloading_hw
	// back to 0; the reason still says why.
	if st.Mode.Effective == plan.ModeHardware || !strings.Contains(st.Mode.Reason, "no flow-offload engine") {
		t.Errorf("hardware on veth must fall back with the reason: %+v", st.Mode)
	}
	fw, _ := os.ReadFile(filepath.Join(root, "etc/config/firewall"))
	if !strings.Contains(string(fw), "option flow_offloading_hw '0'") {
		t.Errorf("flow_offloading_hw not corrected:\n%s", fw)
	}
	stream(t, ns, 15)
	// Wait for the stream to be established (and offloaded where the
	// kernel can): an emulated machine takes seconds to start iperf3.
	for deadline := time.Now().Add(12 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		if raw, err = callJSON("status", nil); err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(raw, &st)
		if (st.Flows.Total > 0 && (!expectFlowtable || st.Flows.Offloaded > 0)) || time.Now().After(deadline) {
			break
		}
	}
	if st.Flows.Total == 0 {
		t.Errorf("no conntrack flow seen while a stream runs through the router: %+v", st.Flows)
	}
	if expectFlowtable && st.Flows.Offloaded == 0 {
		t.Errorf("no offloaded flow on a flowtable kernel: %+v", st.Flows)
	}
	// Another process (the CLI without the daemon's ubus object) still
	// explains why hardware offload is not running after UCI says 0.
	local, _ := exec.Command("ip", "netns", "exec", ns, bin, "status", "--json", "--root", root, "--ubus", sock+".none").Output()
	var ls status.Status
	if err := json.Unmarshal(local, &ls); err != nil || !strings.Contains(ls.Mode.Reason, "no flow-offload engine") {
		t.Errorf("local status after the correction: %v, mode %+v", err, ls.Mode)
	}
	answers := map[string]json.RawMessage{"status": raw}
	for _, c := range []struct {
		method string
		args   map[string]any
	}{
		{"capabilities", nil}, {"flows", map[string]any{"limit": 10}},
		{"cut", map[string]any{"address": "10.0.2.2", "reason": "listed by the integration test"}},
		{"cuts", nil},
		{"uncut", map[string]any{"address": "10.0.2.2"}},
		{"reload", nil},
	} {
		a, err := callJSON(c.method, c.args)
		if err != nil {
			t.Errorf("%s: %v", c.method, err)
			continue
		}
		answers[c.method] = a
	}
	var cutAnswer struct{ Count int }
	json.Unmarshal(answers["cut"], &cutAnswer)
	var cuts struct{ Active int }
	json.Unmarshal(answers["cuts"], &cuts)
	if cutAnswer.Count == 0 || cuts.Active == 0 {
		t.Errorf("cutting the stream's far end cut nothing: cut %s, cuts active %d", answers["cut"], cuts.Active)
	}
	if _, err := callJSON("set", map[string]any{"mode": "turbo"}); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Errorf("set turbo: err %v, want INVALID_ARGUMENT naming mode", err)
	}
	a, err := callJSON("set", map[string]any{"mode": "software"})
	if err != nil {
		t.Fatalf("set software: %v", err)
	}
	var after status.Status
	json.Unmarshal(a, &after)
	if after.Mode.Requested != plan.ModeSoftware {
		t.Errorf("after set software: %+v", after.Mode)
	}
	// What the kernel refused stays refused after set off, when nothing
	// asks the kernel any more: capabilities must not offer software again.
	if _, err := callJSON("set", map[string]any{"mode": "off"}); err != nil {
		t.Fatalf("set off: %v", err)
	}
	a, err = callJSON("capabilities", nil)
	if err != nil {
		t.Fatalf("capabilities: %v", err)
	}
	var caps rpc.Capabilities
	json.Unmarshal(a, &caps)
	offersSoftware := strings.Contains(strings.Join(caps.Modes, " "), plan.ModeSoftware)
	if caps.Kernel.Flowtable != expectFlowtable || offersSoftware != expectFlowtable {
		t.Errorf("after set software and set off on a kernel with flowtables=%t: capabilities say flowtable %t, modes %v (missing %q)",
			expectFlowtable, caps.Kernel.Flowtable, caps.Modes, caps.Kernel.Missing)
	}
	if dir := os.Getenv("FASTPATH_RECORD"); dir != "" {
		for name, a := range answers {
			var pretty bytes.Buffer
			json.Indent(&pretty, a, "", "  ")
			pretty.WriteByte('\n')
			if err := os.WriteFile(filepath.Join(dir, name+".json"), pretty.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// answerJSON prints a daemon's answer as the CLI's --json does.
func answerJSON(answer ubus.Table, err error) (json.RawMessage, error) {
	if answer == nil {
		return nil, err
	}
	j, jerr := answer.MarshalJSON()
	if jerr != nil {
		return nil, jerr
	}
	return j, err
}
