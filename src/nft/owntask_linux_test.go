package nft

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/google/nftables"
	"golang.org/x/sys/unix"
)

// A generation committed by a thread that has exited since (Go ends a
// thread whose goroutine locked it and returned, as every netns switch
// does) is still ours: on a loaded machine Watch reads the event after
// the thread is gone, and must not take our own batch for a foreign one.
func TestIntegrationBatchFromAnExitedThreadIsOurs(t *testing.T) {
	b, _ := newTestBackend(t, "lan0")
	tidc := make(chan uint32, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		bt := &batch{}
		if err := bt.add(func(c *nftables.Conn) error { c.AddTable(ourTable()); return nil }); err != nil {
			t.Error(err)
		}
		conn, err := b.dialNetlink()
		if err != nil {
			t.Error(err)
			tidc <- 0
			return
		}
		defer conn.Close()
		errs, err := bt.send(conn)
		if _, kerr := firstError(errs); err != nil || kerr != nil {
			t.Errorf("creating the table: %v %v", err, kerr)
		}
		tidc <- uint32(unix.Gettid())
	}()
	tid := <-tidc
	if tid == 0 || int(tid) == os.Getpid() {
		t.Fatalf("the batch was sent from thread %d; want a thread of its own", tid)
	}
	task := "/proc/self/task/" + strconv.FormatUint(uint64(tid), 10)
	for gone := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			break
		}
		if time.Now().After(gone) {
			t.Fatalf("thread %d did not exit within 30 s of its goroutine", tid)
		}
	}
	if !isOwnTask(tid) {
		t.Fatalf("thread %d sent our batch and exited; isOwnTask says it is foreign", tid)
	}
	if isOwnTask(uint32(os.Getppid())) {
		t.Fatalf("the parent process %d is taken for ours", os.Getppid())
	}
}
