package daemon

import (
	"context"
	"os"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/status"
)

// TestReloadsCoalesce: a thousand reloads asked for while a pass runs
// cost one more pass, and every caller gets that pass's status.
func TestReloadsCoalesce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := New(ctx, nil)
	started := make(chan string, 16)
	release := make(chan struct{})
	d.runPass = func(_ context.Context, why string) status.Status {
		started <- why
		<-release
		return status.Status{Version: why}
	}
	go d.loop(ctx, make(chan os.Signal))

	first := d.passes.request("rtnetlink")
	if why := <-started; why != "rtnetlink" {
		t.Fatalf("first pass for %q", why)
	}
	var waiting []*pass
	for i := 0; i < 1000; i++ {
		waiting = append(waiting, d.passes.request("ubus reload"))
	}
	d.passes.request("SIGHUP")
	close(release)
	if st, err := first.wait(ctx); err != nil || st.Version != "rtnetlink" {
		t.Fatalf("first pass: %v %+v", err, st)
	}
	for _, p := range waiting {
		st, err := p.wait(ctx)
		if err != nil || st.Version != "ubus reload, SIGHUP" {
			t.Fatalf("a coalesced reload got %v %q, want the one pass for \"ubus reload, SIGHUP\"", err, st.Version)
		}
	}
	if len(started) != 1 {
		t.Fatalf("%d passes after the first, want 1", len(started))
	}
	if p := d.passes.take(); p != nil {
		t.Errorf("a pass is still pending: %v", p.why)
	}
}

// TestPassWaitEndsWithTheCaller: a caller whose context ends stops
// waiting; the pass still runs for the others.
func TestPassWaitEndsWithTheCaller(t *testing.T) {
	var q = newPassQueue()
	p := q.request("ubus reload")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.wait(ctx); err == nil {
		t.Fatal("wait returned without the pass and with the caller gone")
	}
	if q.take() != p {
		t.Fatal("the pass was dropped with its caller")
	}
}
