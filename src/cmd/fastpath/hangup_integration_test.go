package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/daemon"
)

// TestIntegrationHangupsNeverEndTheDaemon: the hotplug script and the
// init script's reload hand events over as a SIGHUP to the pid in the
// daemon's pid file, at any moment. The daemon publishes its pid only once
// a SIGHUP is safe: before it listened for them, one ended the process
// (its default action). Here SIGHUPs come from the moment the pid is
// published, through the daemon's start, and after: it keeps running,
// answers, and re-plans for them.
func TestIntegrationHangupsNeverEndTheDaemon(t *testing.T) {
	ld := newLabDaemon(t, "fphu", "config fastpath 'main'\n\toption enabled '1'\n")
	pidFile := filepath.Join(ld.root, daemon.PidFile)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		if b, _ := os.ReadFile(pidFile); strings.TrimSpace(string(b)) == strconv.Itoa(ld.proc.Pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon (pid %d) never published its pid in %s", ld.proc.Pid, pidFile)
		}
	}
	stop := make(chan struct{})
	sent := make(chan int)
	go func() {
		n := 0
		defer func() { sent <- n }()
		for {
			select {
			case <-stop:
				return
			case <-ld.exited:
				return
			default:
			}
			if ld.proc.Signal(syscall.SIGHUP) == nil {
				n++
			}
			time.Sleep(time.Millisecond)
		}
	}()
	ld.waitReady(t)
	for i := 0; i < 20; i++ { // and while it answers
		if _, err := ld.call("status", nil); err != nil {
			t.Fatalf("status during SIGHUPs: %v", err)
		}
	}
	close(stop)
	n := <-sent
	select {
	case <-ld.exited:
		t.Fatalf("the daemon ended after %d SIGHUPs:\n%s", n, ld.logs.String())
	default:
	}
	if _, err := ld.call("reload", nil); err != nil {
		t.Fatalf("reload after %d SIGHUPs: %v", n, err)
	}
	if !strings.Contains(ld.logs.String(), "trigger=SIGHUP") {
		t.Errorf("no pass ran for %d SIGHUPs:\n%s", n, ld.logs.String())
	}
	t.Logf("%d SIGHUPs sent", n)
}
