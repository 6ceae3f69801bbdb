package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLockIsHeldByOneDaemon(t *testing.T) {
	root := t.TempDir()
	release, err := Lock(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(root, PidFile)
	if b, _ := os.ReadFile(pidFile); string(b) != fmt.Sprintf("%d\n", os.Getpid()) {
		t.Errorf("pid file says %q, want this process's pid %d", b, os.Getpid())
	}
	// flock locks belong to an open file: a second open conflicts even in
	// the same process, as a second daemon's would.
	_, err = Lock(root, 0)
	want := fmt.Sprintf("another fastpath daemon (pid %d) holds %s", os.Getpid(), pidFile)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second lock: %v, want %q", err, want)
	}
	release()
	if b, _ := os.ReadFile(pidFile); len(b) != 0 {
		t.Errorf("released pid file still says %q", b)
	}
	again, err := Lock(root, 0)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	// A waiting lock is taken once the holder lets go (the bound only ends
	// a test whose release never came).
	go func() { time.Sleep(100 * time.Millisecond); again() }()
	third, err := Lock(root, time.Minute)
	if err != nil {
		t.Fatalf("waiting lock: %v", err)
	}
	third()
}
