package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/daemon"
)

// TestIntegrationSecondDaemonRefused: a second `fastpath daemon` on the
// same router exits non-zero naming the pid of the one running, and
// leaves it running; two used to run at once, both managing the tables.
func TestIntegrationSecondDaemonRefused(t *testing.T) {
	ld := startLabDaemon(t, "fplk", "config fastpath 'main'\n\toption enabled '1'\n")
	b, err := os.ReadFile(filepath.Join(ld.root, daemon.PidFile))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %q: %v", b, err)
	}
	if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); !strings.Contains(string(cmdline), "daemon") {
		t.Fatalf("pid file names %d, which is not the daemon (%q)", pid, cmdline)
	}
	second := exec.Command("ip", "netns", "exec", ld.lab.Router, buildBinary(t), "daemon", "--root", ld.root, "--ubus", ld.sock)
	out, err := second.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("second daemon: %v, want a non-zero exit\n%s", err, out)
	}
	if want := fmt.Sprintf("another fastpath daemon (pid %d) holds", pid); !strings.Contains(string(out), want) {
		t.Errorf("second daemon says\n%s\nwant %q", out, want)
	}
	if strings.Contains(string(out), "starting") {
		t.Errorf("the second daemon started before it was refused:\n%s", out)
	}
	if _, err := ld.call("status", nil); err != nil {
		t.Errorf("the first daemon no longer answers: %v", err)
	}
}
