package ubus_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/ubus"
	"github.com/fastpath-wrt/fastpath/src/ubus/ubustest"
)

func echoObject() *ubus.Object {
	return &ubus.Object{Name: "echo", Methods: []ubus.Method{{
		Name:      "echo",
		Signature: []ubus.Arg{{Name: "text", Type: ubus.TypeString}},
		Handler: func(_ context.Context, req *ubus.Request) (any, int) {
			return req.Args, ubus.StatusOK
		},
	}}}
}

func callEcho(t *testing.T, c *ubus.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := c.Call(ctx, "echo", "echo", ubus.Table{{Name: "text", Value: "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := got.Get("text"); v != "hi" {
		t.Fatalf("echo answered %v", got)
	}
}

// ubusd restarting mid-session: the client reconnects, registers its
// object again (with a new id) and calls work again.
func TestClientReconnectsAfterBrokerRestart(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "ubus.sock")
	b, err := ubustest.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	cl := ubus.NewClient(sock, nil)
	cl.MinBackoff = 10 * time.Millisecond
	obj := echoObject()
	if err := cl.AddObject(obj); err != nil {
		t.Fatal(err)
	}
	cl.Start()
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	caller, err := ubus.Dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	callEcho(t, caller)
	firstID := obj.ID()

	// A full restart: the socket goes away, calls fail fast meanwhile.
	b.Close()
	waitFor(t, "the client to notice ubusd went away", func() bool { return cl.Conn() == nil })
	_, err = cl.Call(ctx, "echo", "echo", nil)
	if !errors.Is(err, &ubus.StatusError{Code: ubus.StatusConnectionFailed}) {
		t.Fatalf("call while ubusd is down: %v, want a connection failure at once", err)
	}
	if b, err = ubustest.Listen(sock); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := cl.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if obj.ID() == 0 || obj.ID() == firstID {
		t.Fatalf("object id after restart %08x (before %08x): not re-registered", obj.ID(), firstID)
	}
	caller2 := b.Dial(t)
	callEcho(t, caller2)

	// Dropping every connection (without removing the socket) works too.
	dropped := cl.Conn()
	b.DropClients()
	waitFor(t, "the client to reconnect after its connection was dropped", func() bool {
		c := cl.Conn()
		return c != nil && c != dropped
	})
	if err := cl.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	caller3 := b.Dial(t)
	callEcho(t, caller3)
}

func TestCallTimesOutAndHandlersRunConcurrently(t *testing.T) {
	b := ubustest.Start(t)
	owner := b.Dial(t)
	release := make(chan struct{})
	obj := &ubus.Object{Name: "slow", Methods: []ubus.Method{
		{Name: "block", Handler: func(context.Context, *ubus.Request) (any, int) { <-release; return nil, 0 }},
		{Name: "quick", Handler: func(context.Context, *ubus.Request) (any, int) { return ubus.Table{{Name: "ok", Value: true}}, 0 }},
	}}
	if err := owner.AddObject(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	defer close(release)
	caller := b.Dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := caller.Call(ctx, "slow", "block", nil)
	if !errors.Is(err, &ubus.StatusError{Code: ubus.StatusTimeout}) {
		t.Fatalf("blocked call: %v, want a timeout", err)
	}
	// The blocked handler does not hold up the next call.
	got, err := caller.Call(context.Background(), "slow", "quick", nil)
	if err != nil || len(got) != 1 {
		t.Fatalf("quick call after a blocked one: %v %v", got, err)
	}
}

func TestArgumentTypesAreChecked(t *testing.T) {
	b := ubustest.Start(t)
	owner := b.Dial(t)
	if err := owner.AddObject(context.Background(), echoObject()); err != nil {
		t.Fatal(err)
	}
	caller := b.Dial(t)
	data, err := caller.Call(context.Background(), "echo", "echo", ubus.Table{{Name: "text", Value: int32(5)}})
	var se *ubus.StatusError
	if !errors.As(err, &se) || se.Code != ubus.StatusInvalidArgument {
		t.Fatalf("error %v, want Invalid argument", err)
	}
	if msg, _ := data.Get("error"); msg != `text: must be a string, got an integer — pass e.g. {"text": "text"}` {
		t.Errorf("error text %q", msg)
	}
	if _, err := caller.Call(context.Background(), "echo", "nosuch", nil); !errors.Is(err, &ubus.StatusError{Code: ubus.StatusMethodNotFound}) {
		t.Errorf("missing method: %v", err)
	}
}

func TestMessageOverLimitIsRefused(t *testing.T) {
	c := ubustest.Start(t).Dial(t)
	big := make([]byte, ubus.MaxMessageLen)
	for i := range big {
		big[i] = 'a'
	}
	err := c.SendEvent(context.Background(), "demo.big", ubus.Table{{Name: "blob", Value: string(big)}})
	var tooLarge ubus.ErrMessageTooLarge
	if !errors.As(err, &tooLarge) {
		t.Fatalf("error %v, want ErrMessageTooLarge", err)
	}
	// The connection is still good.
	if err := c.SendEvent(context.Background(), "demo.small", nil); err != nil {
		t.Fatal(err)
	}
}

// An answer over ubusd's limit is not sent; the caller gets an error
// status with the reason instead of a dropped connection.
func TestOversizedAnswerBecomesAnError(t *testing.T) {
	b := ubustest.Start(t)
	owner := b.Dial(t)
	big := string(make([]byte, ubus.MaxMessageLen))
	err := owner.AddObject(context.Background(), &ubus.Object{Name: "big", Methods: []ubus.Method{{
		Name:    "get",
		Handler: func(context.Context, *ubus.Request) (any, int) { return ubus.Table{{Name: "blob", Value: big}}, 0 },
	}}})
	if err != nil {
		t.Fatal(err)
	}
	caller := b.Dial(t)
	data, err := caller.Call(context.Background(), "big", "get", nil)
	var se *ubus.StatusError
	if !errors.As(err, &se) || se.Code != ubus.StatusUnknownError || !strings.Contains(se.Message, "exceeds ubusd's limit") {
		t.Fatalf("error %v (data %v), want UNKNOWN_ERROR naming the size limit", err, data)
	}
	// Both connections are still usable.
	if _, err := caller.Lookup(context.Background(), "big"); err != nil {
		t.Fatal(err)
	}
}

func TestPing(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "ubus.sock")
	b, err := ubustest.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	c := b.Dial(t)
	if err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := c.Ping(ctx); err == nil {
		t.Fatal("ping answered with ubusd gone")
	}
}

// Events reach a listener in the order they were sent.
func TestEventsArriveInOrder(t *testing.T) {
	b := ubustest.Start(t)
	listener := b.Dial(t)
	sender := b.Dial(t)
	const n = 200
	got := make(chan int32, n)
	if err := listener.Listen(context.Background(), "seq", func(_ string, d ubus.Table) {
		v, _ := d.Get("i")
		got <- v.(int32)
	}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := sender.SendEvent(context.Background(), "seq", ubus.Table{{Name: "i", Value: int32(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := int32(0); i < n; i++ {
		select {
		case v := <-got:
			if v != i {
				t.Fatalf("event %d arrived as number %d", v, i)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("event %d missing", i)
		}
	}
}

// waitFor polls cond until it holds; the bound only ends a test that would
// hang, it decides nothing on a slow machine.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
	}
}
