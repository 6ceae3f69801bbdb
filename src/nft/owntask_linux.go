package nft

import (
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// The kernel names the task (thread) that committed a generation
// (NFTA_GEN_PROC_PID). The event may be read after that thread has exited
// (Go ends a thread whose goroutine locked it and returned, as every netns
// switch does), when /proc/self/task no longer lists it; so each batch
// records the thread it is sent from, and Watch asks this record first.
const ownTaskMemory = 64

var ownTasks struct {
	sync.Mutex
	ring [ownTaskMemory]uint32
	next int
}

// sendAsOwnTask sends a batch from a thread pinned for the call and
// remembers that thread as ours. The kernel commits a batch inside the
// sendmsg call, so the pinned thread is the one the generation names.
func sendAsOwnTask(conn *netlink.Conn, msgs []netlink.Message) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rememberOwnTask(uint32(unix.Gettid()))
	_, err := conn.SendMessages(msgs)
	return err
}

func rememberOwnTask(tid uint32) {
	ownTasks.Lock()
	defer ownTasks.Unlock()
	for _, t := range ownTasks.ring {
		if t == tid {
			return
		}
	}
	ownTasks.ring[ownTasks.next] = tid
	ownTasks.next = (ownTasks.next + 1) % ownTaskMemory
}

// isOwnTask reports whether the kernel task id is a thread of this
// process: one that sent a batch of ours, or one still alive in it.
func isOwnTask(tid uint32) bool {
	if int(tid) == os.Getpid() {
		return true
	}
	ownTasks.Lock()
	for _, t := range ownTasks.ring {
		if t == tid && tid != 0 {
			ownTasks.Unlock()
			return true
		}
	}
	ownTasks.Unlock()
	_, err := os.Stat("/proc/self/task/" + strconv.FormatUint(uint64(tid), 10))
	return err == nil
}
