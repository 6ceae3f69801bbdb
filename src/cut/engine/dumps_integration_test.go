//go:build linux

package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/cut/engine"
)

// TestIntegrationLiveCutsOutlastDumps: a dump of a cut set that changes
// while it is read (elements of other cuts go in, go out and expire, as
// on a busy router) can skip live elements. A cut whose elements a dump
// skipped is still cut: the summary must keep it, and a release must
// still take its elements out. Before, the summary forgot such a cut as
// "expired in the kernel", and an address a block list then dropped
// stayed cut for as long as its sender sent (banIP's reload in the
// router's day); a release of many cuts left the ones its dump skipped.
func TestIntegrationLiveCutsOutlastDumps(t *testing.T) {
	const cuts = 1500
	cfg := testConfig()
	cfg.Expiry = time.Minute // nothing of ours expires during the test
	r := newRig(t, "fpdm", cfg)
	ctx := context.Background()
	tuple := func(i int) cut.Tuple {
		return cut.Tuple{Proto: "udp", Src: fmt.Sprintf("198.18.%d.%d", i/250, 1+i%250), Dst: "198.19.0.1", SrcPort: uint16(10000 + i), DstPort: 53}
	}
	var ts []cut.Tuple
	for i := 0; i < cuts; i++ {
		ts = append(ts, tuple(i))
	}
	if err := engine.CutTuples(r.eng, ts, "test"); err != nil {
		t.Fatal(err)
	}
	known := func() int {
		n := 0
		for _, c := range r.eng.Summary().Cuts {
			if c.Trigger == "test" {
				n++
			}
		}
		return n
	}
	if n := known(); n != cuts {
		t.Fatalf("%d of %d cuts known before any churn", n, cuts)
	}

	// Churn: elements of other tuples go in with a short timeout and out
	// again, all the time, the way a router's cuts come and expire.
	churnCtx, stopChurn := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for round := 0; churnCtx.Err() == nil; round++ {
			var add, del strings.Builder
			for j := 0; j < 400; j++ {
				k := fmt.Sprintf("203.0.113.%d . 198.51.100.%d . udp . %d . 9", 1+j%200, 1+round%200, 20000+j)
				fmt.Fprintf(&add, "add element netdev %s %s { %s timeout 1s }\n", cut.TableName, cut.SetName4, k)
				if j%2 == 0 {
					fmt.Fprintf(&del, "delete element netdev %s %s { %s }\n", cut.TableName, cut.SetName4, k)
				}
			}
			_ = r.lab.Nft(r.lab.Router, add.String())
			_ = r.lab.Nft(r.lab.Router, del.String())
		}
	}()
	defer func() { stopChurn(); wg.Wait() }()

	// The summary, as LuCI polls it, never forgets a live cut.
	for round := 0; round < 40; round++ {
		if n := known(); n != cuts {
			t.Fatalf("summary %d: %d of %d live cuts known; the others were forgotten while their elements are in the set", round, n, cuts)
		}
	}
	// A release of every cut, under the same churn, takes every element out.
	n, err := r.eng.Release(ctx, func(c cut.Cut) bool { return c.Trigger == "test" })
	if err != nil {
		t.Fatalf("release: %v", err)
	}
	stopChurn()
	wg.Wait()
	left := r.elementsOf(t, cut.SetName4, "198.19.0.1")
	if n != cuts || len(left) > 0 {
		var some []string
		for tu := range left {
			if len(some) < 5 {
				some = append(some, tu.String())
			}
		}
		t.Fatalf("release counted %d of %d cuts; %d elements of them are still in the cut set (%s)", n, cuts, len(left), strings.Join(some, "; "))
	}
}
