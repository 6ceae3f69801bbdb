//go:build linux

package engine_test

import (
	"context"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"io"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// TestIntegrationCutOnOff compares a cut UDP flood with cut_in_fastpath on
// and off, the way seed 003's table does: frames that still reach the
// router's stack and the far side in the 2 s after the cut.
func TestIntegrationCutOnOff(t *testing.T) {
	type row struct {
		sent, toStack, farSide uint64
	}
	run := func(prefix string, inFastpath bool) row {
		cfg := testConfig()
		cfg.InFastpath = inFastpath
		r := newRig(t, prefix, cfg)
		r.addStackCounters(t)
		f := r.startFlow(t, labnet.ClientV4+":40050", labnet.ServerV4+":9050", time.Millisecond, 10000)
		if !waitFor(hang, func() bool { return f.toClient.Load() > 100 }) {
			t.Fatalf("no flood before the cut")
		}
		if _, err := r.eng.CutAddress(context.Background(), netip.MustParsePrefix(labnet.ServerV4+"/32"), "on/off", "test", cut.CutOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		s0, w0, c0 := f.serverSent.Load(), r.stackFrames(t, "wan0"), f.toClient.Load()
		time.Sleep(2 * time.Second)
		return row{sent: f.serverSent.Load() - s0, toStack: r.stackFrames(t, "wan0") - w0, farSide: f.toClient.Load() - c0}
	}
	on := run("fpon", true)
	off := run("fpof", false)
	t.Logf("cut/on:  flood frames %d, frames_to_stack %d, far_side_frames %d", on.sent, on.toStack, on.farSide)
	t.Logf("cut/off: flood frames %d, frames_to_stack %d, far_side_frames %d", off.sent, off.toStack, off.farSide)
	if on.toStack != 0 || on.farSide != 0 {
		t.Errorf("cut/on: %d frames reached the stack, %d the client; want none", on.toStack, on.farSide)
	}
	// Off, a cut only deletes the entry: the next frames make a new one and
	// keep reaching the router's stack.
	if off.toStack < off.sent/2 {
		t.Errorf("cut/off: only %d of %d frames reached the stack; the comparison measures nothing", off.toStack, off.sent)
	}
}

// TestIntegrationCutTCP cuts an established TCP connection: the stream
// stops in both directions.
func TestIntegrationCutTCP(t *testing.T) {
	r := newRig(t, "fptc", testConfig())
	l, err := labnet.ListenTCP(r.lab.Server, labnet.ServerV4+":9060")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		go io.Copy(c, c) // echo
		<-time.After(20 * time.Second)
	}()
	c, err := labnet.DialTCP(r.lab.Client, labnet.ServerV4+":9060")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var echoed atomic.Uint64
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			echoed.Add(uint64(n))
		}
	}()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		msg := make([]byte, 100)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				c.SetWriteDeadline(time.Now().Add(time.Second))
				c.Write(msg)
			}
		}
	}()
	if !waitFor(hang, func() bool { return echoed.Load() > 1000 }) {
		t.Fatal("no echo before the cut")
	}
	cuts, err := r.eng.CutAddress(context.Background(), netip.MustParsePrefix(labnet.ServerV4+"/32"), "tcp", "test", cut.CutOptions{})
	if err != nil || len(cuts) != 1 || cuts[0].Original.Proto != "tcp" || !cuts[0].InFastpath {
		t.Fatalf("CutAddress(tcp) = %+v, %v", cuts, err)
	}
	time.Sleep(200 * time.Millisecond)
	e0 := echoed.Load()
	time.Sleep(time.Second)
	if d := echoed.Load() - e0; d != 0 {
		t.Errorf("%d bytes echoed after the cut", d)
	}
	s := r.eng.Summary()
	if s.Active != 1 || s.Cuts[0].Frames == 0 {
		t.Errorf("summary: %d active, frames %v: want the retransmissions dropped", s.Active, s.Cuts)
	}
}
