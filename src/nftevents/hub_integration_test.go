//go:build linux

package nftevents_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/nftevents"
	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
)

// netns makes a network namespace for the test and returns its fd.
func netns(t *testing.T, name string) int {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (ip netns add)")
	}
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v %s", name, err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	f, err := os.Open("/run/netns/" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return int(f.Fd())
}

func nft(t *testing.T, ns, script string) {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft -f: %v %s (needs nftables)", err, out)
	}
}

// gens reads until n generations ended (NEWGEN) or the subscription did.
func gens(sub *nftevents.Sub, n int) (int, error) {
	seen := 0
	timeout := time.After(10 * time.Second)
	for seen < n {
		select {
		case msgs, ok := <-sub.Messages():
			if !ok {
				return seen, sub.Err()
			}
			for _, m := range msgs {
				if m.Header.Type == netlink.HeaderType(10<<8|15) {
					seen++
				}
			}
		case <-timeout:
			return seen, fmt.Errorf("only %d of %d generations in 10 s", seen, n)
		}
	}
	return seen, nil
}

// TestIntegrationHubFansOut: two subscribers of one socket both see every
// transaction; one that stops reading loses its subscription (ErrLost)
// and the other reads on.
func TestIntegrationHubFansOut(t *testing.T) {
	fd := netns(t, "fpnfev")
	hub, err := nftevents.Open(fd)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- hub.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	a, b := hub.Subscribe(), hub.Subscribe()
	defer a.Close()
	defer b.Close()
	nft(t, "fpnfev", "table inet t { set s { type ipv4_addr; }; }\n")
	for name, s := range map[string]*nftevents.Sub{"a": a, "b": b} {
		if n, err := gens(s, 1); err != nil || n != 1 {
			t.Fatalf("subscriber %s: %d generations, %v", name, n, err)
		}
	}
	// b stops reading: more transactions than its queue holds batches
	// (the kernel puts one transaction's notifications in as few messages
	// as it can, but never two transactions in one).
	c, err := nftables.New(nftables.WithNetNSFd(fd))
	if err != nil {
		t.Fatal(err)
	}
	set, err := c.GetSetByName(&nftables.Table{Family: nftables.TableFamilyINet, Name: "t"}, "s")
	if err != nil {
		t.Fatal(err)
	}
	loaded := make(chan error, 1)
	const n = 5000
	go func() {
		for i := 0; i < n; i++ {
			if err := c.SetAddElements(set, []nftables.SetElement{{Key: []byte{10, byte(i >> 8), byte(i), 1}}}); err != nil {
				loaded <- err
				return
			}
			if err := c.Flush(); err != nil {
				loaded <- err
				return
			}
		}
		loaded <- nil
	}()
	if got, err := gens(a, n); err != nil || got != n {
		t.Fatalf("subscriber a during the load: %d of %d generations, %v", got, n, err)
	}
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
	if err := b.Err(); !errors.Is(err, nftevents.ErrLost) {
		t.Fatalf("the subscriber that stopped reading: %v, want ErrLost", err)
	}
	nft(t, "fpnfev", "add element inet t s { 192.0.2.1 }\n")
	if _, err := gens(a, 1); err != nil {
		t.Fatalf("subscriber a after b was dropped: %v", err)
	}
}
