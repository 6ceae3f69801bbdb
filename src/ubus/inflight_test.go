package ubus_test

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/ubus"
	"github.com/fastpath-wrt/fastpath/src/ubus/ubustest"
)

// TestPipelinedCallsAreBounded: thousands of calls pipelined on one
// socket, to a method that does not return until the test says so, run
// at most MaxCallsInFlight handlers at once; every other call is answered
// at once with StatusBusy and a text, and the process's goroutines stay
// bounded. Nothing here depends on timing: the handlers block until
// released.
func TestPipelinedCallsAreBounded(t *testing.T) {
	const calls = 5000
	b := ubustest.Start(t)
	sock := b.Path()
	owner := b.Dial(t)
	release := make(chan struct{})
	entered := make(chan struct{}, calls)
	obj := &ubus.Object{Name: "slow", Methods: []ubus.Method{{Name: "reload", Handler: func(ctx context.Context, _ *ubus.Request) (any, int) {
		entered <- struct{}{}
		<-release
		return ubus.Table{{Name: "done", Value: true}}, ubus.StatusOK
	}}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := owner.AddObject(ctx, obj); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()

	// A raw caller, as `ubus call` in a loop without waiting would be:
	// every INVOKE written before any answer is read.
	nc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	hello, err := ubus.ReadMessage(nc)
	if err != nil || hello.Type != ubus.MsgHello {
		t.Fatalf("no HELLO: %v", err)
	}
	type answer struct {
		status int
		text   string
	}
	answers := make(chan answer, calls)
	go func() {
		texts := map[uint16]string{}
		for {
			m, err := ubus.ReadMessage(nc)
			if err != nil {
				close(answers)
				return
			}
			switch m.Type {
			case ubus.MsgData:
				d, _ := m.Table(ubus.AttrData)
				if e, ok := d.Get("error"); ok {
					texts[m.Seq], _ = e.(string)
				}
			case ubus.MsgStatus:
				st, _ := m.U32(ubus.AttrStatus)
				answers <- answer{int(st), texts[m.Seq]}
				delete(texts, m.Seq)
			}
		}
	}()
	for i := 0; i < calls; i++ {
		m := &ubus.Message{Header: ubus.Header{Type: ubus.MsgInvoke, Seq: uint16(i + 1), Peer: obj.ID()}}
		m.AddU32(ubus.AttrObjID, obj.ID())
		m.AddString(ubus.AttrMethod, "reload")
		if err := m.AddTable(ubus.AttrData, ubus.Table{}); err != nil {
			t.Fatal(err)
		}
		buf, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write(buf); err != nil {
			t.Fatalf("writing call %d: %v", i, err)
		}
	}
	// Every call beyond the bound is answered while the others still run.
	for i := 0; i < calls-ubus.MaxCallsInFlight; i++ {
		a, ok := <-answers
		if !ok {
			t.Fatalf("connection closed after %d answers", i)
		}
		if a.status != ubus.StatusBusy || !strings.Contains(a.text, "busy") {
			t.Fatalf("answer %d: status %d %q, want StatusBusy with a text saying busy", i, a.status, a.text)
		}
	}
	for i := 0; i < ubus.MaxCallsInFlight; i++ {
		<-entered
	}
	if n := len(entered); n != 0 {
		t.Fatalf("%d handlers beyond the bound of %d ran", n, ubus.MaxCallsInFlight)
	}
	// The handlers running, plus the test's reader: nothing per refused call.
	if g := runtime.NumGoroutine(); g > before+ubus.MaxCallsInFlight+8 {
		t.Errorf("%d goroutines with %d calls pipelined (%d before): not bounded", g, calls, before)
	}
	close(release)
	for i := 0; i < ubus.MaxCallsInFlight; i++ {
		if a := <-answers; a.status != ubus.StatusOK {
			t.Fatalf("a running call ended with status %d %q", a.status, a.text)
		}
	}
	// The connection still serves calls once the flood is over.
	caller := b.Dial(t)
	got, err := caller.Call(ctx, "slow", "reload", nil)
	if err != nil || got == nil {
		t.Fatalf("a call after the flood: %v %v", got, err)
	}
}
