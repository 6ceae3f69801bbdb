package nft

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	vnl "github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// newTestNetNS creates a network namespace for one test and returns an fd
// referring to it; the namespace goes away with the fd at the test's end.
// It needs root (CAP_SYS_ADMIN); without it the test is skipped, naming why.
func newTestNetNS(t *testing.T) int {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: network namespaces (CLONE_NEWNET)")
	}
	type result struct {
		fd  int
		err error
	}
	ch := make(chan result)
	go func() {
		// This thread enters the new namespace and is never unlocked, so
		// the runtime discards it instead of reusing it elsewhere.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("unshare(CLONE_NEWNET): %w", err)}
			return
		}
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		ch <- result{fd, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatalf("creating a network namespace (kernel feature CONFIG_NET_NS): %v", r.err)
	}
	t.Cleanup(func() { unix.Close(r.fd) })
	return r.fd
}

// addVeths creates veth pairs <name> <-> <name>p in the namespace and sets both ends up.
func addVeths(t *testing.T, nsFD int, names ...string) {
	t.Helper()
	h, err := vnl.NewHandleAt(netns.NsHandle(nsFD), unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatalf("netlink handle in the test namespace: %v", err)
	}
	defer h.Close()
	for _, n := range names {
		veth := &vnl.Veth{LinkAttrs: vnl.LinkAttrs{Name: n}, PeerName: n + "p"}
		if err := h.LinkAdd(veth); err != nil {
			t.Fatalf("creating veth %s (kernel feature CONFIG_VETH): %v", n, err)
		}
		for _, name := range []string{n, n + "p"} {
			l, err := h.LinkByName(name)
			if err == nil {
				err = h.LinkSetUp(l)
			}
			if err != nil {
				t.Fatalf("setting %s up: %v", name, err)
			}
		}
	}
}

// delLink deletes a device from the namespace.
func delLink(t *testing.T, nsFD int, name string) {
	t.Helper()
	h, err := vnl.NewHandleAt(netns.NsHandle(nsFD), unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	l, err := h.LinkByName(name)
	if err == nil {
		err = h.LinkDel(l)
	}
	if err != nil {
		t.Fatalf("deleting %s: %v", name, err)
	}
}

// inNetNS runs f on a thread inside the namespace (for commands such as nft).
func inNetNS(t *testing.T, nsFD int, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		if err := unix.Setns(nsFD, unix.CLONE_NEWNET); err != nil {
			t.Errorf("setns: %v", err)
			return
		}
		f()
	}()
	<-done
}
