package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/daemon"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/status"
	"github.com/fastpath-wrt/fastpath/src/ubus/ubustest"
)

// lockedBuffer is a daemon's stderr, read while the daemon writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// labDaemon is the real binary running as the router of a labnet
// topology, on its own test broker.
type labDaemon struct {
	lab    *labnet.Lab
	root   string
	sock   string
	broker *ubustest.Broker // the current one: a test may stop it and start another
	logs   *lockedBuffer
	proc   *os.Process   // the daemon (ip netns exec runs it in its own place)
	exited chan struct{} // closed when it has ended
}

// startLabDaemon builds the topology, a UCI root whose network has the
// router's lan0 and wan0, and starts `fastpath daemon` in the router's
// namespace. fastpathConfig is /etc/config/fastpath.
func startLabDaemon(t *testing.T, prefix, fastpathConfig string, env ...string) *labDaemon {
	t.Helper()
	ld := newLabDaemon(t, prefix, fastpathConfig, env...)
	ld.waitReady(t)
	return ld
}

// newLabDaemon starts the daemon without waiting for it to answer; env
// (NAME=value) is added to the test's own environment.
func newLabDaemon(t *testing.T, prefix, fastpathConfig string, env ...string) *labDaemon {
	t.Helper()
	if m := labnet.Missing(); m != "" {
		t.Skip("needs " + m)
	}
	bin := buildBinary(t)
	lab, err := labnet.New(prefix, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lab.Close)
	root := t.TempDir()
	for dir, files := range map[string]map[string]string{
		"etc/config": {
			"firewall": "config defaults\n\toption flow_offloading '1'\n",
			"network": "config interface 'lan'\n\toption device 'lan0'\n\toption proto 'static'\n\n" +
				"config interface 'wan'\n\toption device 'wan0'\n\toption proto 'static'\n",
			"fastpath": fastpathConfig,
		},
	} {
		os.MkdirAll(filepath.Join(root, dir), 0o755)
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(root, dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	os.Symlink("/sys", filepath.Join(root, "sys"))
	os.Symlink("/proc", filepath.Join(root, "proc"))
	sock := filepath.Join(t.TempDir(), "ubus.sock")
	broker, err := ubustest.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := exec.CommandContext(ctx, "ip", "netns", "exec", lab.Router, bin, "daemon", "-v", "--root", root, "--ubus", sock)
	if len(env) > 0 {
		d.Env = append(os.Environ(), env...)
	}
	ld := &labDaemon{lab: lab, root: root, sock: sock, broker: broker, logs: &lockedBuffer{}, exited: make(chan struct{})}
	t.Cleanup(func() { ld.broker.Close() })
	d.Stderr = ld.logs
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	ld.proc = d.Process
	go func() { d.Wait(); close(ld.exited) }()
	t.Cleanup(func() {
		cancel()
		<-ld.exited
		if t.Failed() {
			st, _ := ld.call("status", nil)
			t.Logf("status: %s", st)
			t.Logf("daemon log:\n%s", ld.logs.String())
		}
	})
	return ld
}

// waitReady waits until the daemon's status answers with its first pass done.
func (ld *labDaemon) waitReady(t *testing.T) {
	t.Helper()
	if _, err := waitFirstPass(func() (json.RawMessage, error) { return ld.call("status", nil) }, 20*time.Second, ld.exited); err != nil {
		t.Fatal(err)
	}
}

// waitFirstPass asks status until the daemon answers with its first pass
// done (the object answers while it runs, saying so), the daemon ends
// (ended closed; nil: not watched) or limit passes.
func waitFirstPass(ask func() (json.RawMessage, error), limit time.Duration, ended <-chan struct{}) (status.Status, error) {
	var st status.Status
	deadline := time.Now().Add(limit)
	for {
		raw, err := ask()
		if err == nil {
			if err = json.Unmarshal(raw, &st); err != nil {
				return st, fmt.Errorf("status answer: %w", err)
			}
			if st.Mode.Reason != daemon.StartingReason {
				return st, nil
			}
			err = errors.New("still starting")
		}
		select {
		case <-ended:
			return st, fmt.Errorf("the daemon ended before it answered: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("the daemon's status after %v: %v %+v", limit, err, st.Mode)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (ld *labDaemon) call(method string, args map[string]any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return answerJSON(rpc.CallFastpath(ctx, ld.sock, method, args))
}

func (ld *labDaemon) cuts(t *testing.T) cut.Summary {
	t.Helper()
	raw, err := ld.call("cuts", nil)
	if err != nil {
		t.Fatalf("cuts: %v", err)
	}
	var s cut.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("cuts answer %s: %v", raw, err)
	}
	return s
}

// udpFlow opens one UDP flow from the client to the server and sends on
// it until the router tracks it.
func (ld *labDaemon) udpFlow(t *testing.T, sport, dport int) *net.UDPConn {
	t.Helper()
	srv, err := labnet.ListenUDP(ld.lab.Server, fmt.Sprintf("%s:%d", labnet.ServerV4, dport))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, err := labnet.DialUDP(ld.lab.Client, fmt.Sprintf("%s:%d", labnet.ClientV4, sport), fmt.Sprintf("%s:%d", labnet.ServerV4, dport))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c.Write([]byte("x"))
		out, _ := ld.lab.Exec(ld.lab.Router, "conntrack", "-L", "-p", "udp", "--sport", fmt.Sprint(sport))
		if strings.Contains(out, "dport="+fmt.Sprint(dport)) {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("the router does not track udp %d -> %d after 30 s: %s", sport, dport, out)
		}
	}
}

// waitCut waits until the daemon reports a cut of the flow from sport by
// the named block list. The bound is generous: it only ends a test whose
// watcher is gone, where the cut never comes.
func (ld *labDaemon) waitCut(t *testing.T, sport uint16, trigger string) bool {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		for _, c := range ld.cuts(t).Cuts {
			if c.Original.SrcPort == sport && c.Trigger == trigger {
				return true
			}
		}
	}
	return false
}

// TestIntegrationBlocklistWatchedAfterReload: a block list added to the
// configuration and taken in by `ubus call fastpath reload` (LuCI's Save &
// Apply, the init script's reload, the hotplug script), then `set`, is
// still watched after the calls returned: a new entry cuts the established
// flows of the listed address, and a new connection to it is cut as it
// appears. The watchers used to run on the ubus call's context and died
// when the call returned ("cut: initial block-list cut ... context
// canceled").
func TestIntegrationBlocklistWatchedAfterReload(t *testing.T) {
	listDir := t.TempDir()
	list := filepath.Join(listDir, "blocklist.txt")
	if err := os.WriteFile(list, []byte("203.0.113.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ld := startLabDaemon(t, "fpwr", "config fastpath 'main'\n\toption enabled '1'\n")
	withList := "config fastpath 'main'\n\toption enabled '1'\n\n" +
		"config blocklist\n\toption name 'local'\n\toption type 'file'\n\toption path '" + list + "'\n"
	if err := os.WriteFile(filepath.Join(ld.root, "etc/config/fastpath"), []byte(withList), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ld.call("reload", nil); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if _, err := ld.call("set", map[string]any{"mode": "software"}); err != nil {
		t.Fatalf("set software: %v", err)
	}
	if s := ld.cuts(t); len(s.Blocklists) != 1 || s.Blocklists[0].Name != "local" {
		t.Fatalf("the block list added by the reload is not reported: %+v", s.Blocklists)
	}
	ld.udpFlow(t, 42001, 9201)
	if s := ld.cuts(t); s.Active != 0 {
		t.Fatalf("cuts before the server is listed: %+v", s.Cuts)
	}
	tmp := list + ".new"
	if err := os.WriteFile(tmp, []byte("203.0.113.9\n"+labnet.ServerV4+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, list); err != nil {
		t.Fatal(err)
	}
	if !ld.waitCut(t, 42001, "blocklist:local") {
		t.Fatalf("the established flow to the newly listed %s was never cut after a reload: cuts %+v", labnet.ServerV4, ld.cuts(t))
	}
	ld.udpFlowNoWait(t, 42002, 9202)
	if !ld.waitCut(t, 42002, "blocklist:local") {
		t.Fatalf("a new connection to the listed %s was never cut after a reload: cuts %+v", labnet.ServerV4, ld.cuts(t))
	}
	if strings.Contains(ld.logs.String(), "context canceled") {
		t.Errorf("the daemon logged a cancelled context:\n%s", ld.logs.String())
	}
}

// udpFlowNoWait opens a UDP flow and sends a few frames without waiting
// for conntrack (a listed flow is cut, so its entry may be gone at once).
func (ld *labDaemon) udpFlowNoWait(t *testing.T, sport, dport int) {
	t.Helper()
	srv, err := labnet.ListenUDP(ld.lab.Server, fmt.Sprintf("%s:%d", labnet.ServerV4, dport))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, err := labnet.DialUDP(ld.lab.Client, fmt.Sprintf("%s:%d", labnet.ClientV4, sport), fmt.Sprintf("%s:%d", labnet.ServerV4, dport))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		for i := 0; i < 50; i++ {
			if _, err := c.Write([]byte("x")); err != nil && !strings.Contains(err.Error(), "refused") {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}
