package ubustest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/ubus"
)

func named(name string) *ubus.Object {
	return &ubus.Object{Name: name, Methods: []ubus.Method{{Name: "m", Handler: func(_ context.Context, r *ubus.Request) (any, int) {
		return ubus.Table{{Name: "user", Value: r.User}, {Name: "group", Value: r.Group}}, 0
	}}}}
}

// Behaviour beyond the recordings, following ubusd_proto.c and
// ubusd_event.c: wildcard lookups in path order, ubus.object.* events,
// no event loop-back, reserved event names, duplicate paths.
func TestBrokerFollowsUbusd(t *testing.T) {
	b := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	watcher := b.Dial(t)
	seen := make(chan string, 10)
	if err := watcher.Listen(ctx, "ubus.object.*", func(ev string, d ubus.Table) {
		p, _ := d.Get("path")
		seen <- ev + " " + p.(string)
	}); err != nil {
		t.Fatal(err)
	}
	owner := b.Dial(t)
	for _, n := range []string{"network.interface.wan", "network.device", "network.interface.lan", "system"} {
		if err := owner.AddObject(ctx, named(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := owner.AddObject(ctx, named("system")); !errors.Is(err, &ubus.StatusError{Code: ubus.StatusInvalidArgument}) {
		t.Errorf("second object at a taken path: %v, want Invalid argument", err)
	}
	if got := <-seen; got != "ubus.object.add network.interface.wan" {
		t.Errorf("first object event %q", got)
	}
	objs, err := owner.Lookup(ctx, "network.interface.*")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].Path != "network.interface.lan" || objs[1].Path != "network.interface.wan" {
		t.Errorf("wildcard lookup gave %+v, want lan then wan", objs)
	}
	if _, err := owner.Lookup(ctx, "nosuch.*"); !errors.Is(err, &ubus.StatusError{Code: ubus.StatusNotFound}) {
		t.Errorf("empty wildcard: %v", err)
	}
	got, err := watcher.Call(ctx, "system", "m", nil)
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := got.Get("user"); u != "root" {
		t.Errorf("forwarded call carried user %v, want root", u)
	}
	// The sender's own listener does not hear its event; others do. The
	// broker has queued the owner's event before it answers the send, so a
	// looped-back copy would arrive before the watcher's.
	own := make(chan string, 2)
	if err := owner.Listen(ctx, "demo", func(ev string, d ubus.Table) {
		from, _ := d.Get("from")
		own <- fmt.Sprint(ev, " from ", from)
	}); err != nil {
		t.Fatal(err)
	}
	if err := owner.SendEvent(ctx, "demo", ubus.Table{{Name: "from", Value: "owner"}}); err != nil {
		t.Fatal(err)
	}
	if err := watcher.SendEvent(ctx, "ubus.fake", nil); !errors.Is(err, &ubus.StatusError{Code: ubus.StatusPermissionDenied}) {
		t.Errorf("sending a ubus.* event: %v, want Permission denied", err)
	}
	if err := watcher.SendEvent(ctx, "demo", ubus.Table{{Name: "from", Value: "watcher"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-own:
		if ev != "demo from watcher" {
			t.Errorf("first event heard by the owner: %q, want the watcher's (its own must not loop back)", ev)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("listener did not hear another client's event")
	}
	// A client that goes away takes its objects with it.
	owner.Close()
	for deadline := time.Now().Add(30 * time.Second); len(b.Objects()) > 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if objs := b.Objects(); len(objs) != 0 {
		t.Errorf("objects left after their owner disconnected: %v", objs)
	}
}
