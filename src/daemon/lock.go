package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// PidFile is where the running daemon keeps its pid, under an exclusive
// flock that makes it the only one: two daemons would fight over the
// same tables. The kernel drops the lock when the process ends, however
// it ends, so a crash never leaves it held.
const PidFile = "var/run/fastpath/daemon.pid"

// Lock takes the daemon's lock below root and writes this process's pid
// into it; release empties the file and lets the lock go. It waits up to
// wait for a daemon that is stopping (procd restarts, disable) to let it
// go; when another daemon still holds it, the error names its pid.
func Lock(root string, wait time.Duration) (release func(), err error) {
	path := filepath.Join(root, PidFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("daemon lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("daemon lock: %w", err)
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	for deadline := time.Now().Add(wait); errors.Is(err, unix.EWOULDBLOCK) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
	if err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("another fastpath daemon (%s) holds %s: stop it first (/etc/init.d/fastpath stop)", holder(path), path)
		}
		return nil, fmt.Errorf("daemon lock %s: %w", path, err)
	}
	// The file is not removed on release: a daemon starting then could
	// lock the removed file while a third locks a new one.
	if err = f.Truncate(0); err == nil { // the offset is 0: nothing was read
		_, err = f.Write([]byte(strconv.Itoa(os.Getpid()) + "\n"))
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("daemon lock %s: %w", path, err)
	}
	return func() {
		f.Truncate(0)
		f.Close()
	}, nil
}

// holder names the pid a lock file holds, as far as it says.
func holder(path string) string {
	b, _ := os.ReadFile(path)
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
		return "pid " + strconv.Itoa(pid)
	}
	return "its pid not written yet"
}
