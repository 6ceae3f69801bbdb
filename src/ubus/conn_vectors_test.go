package ubus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/ubus/internal/vectors"
)

// scriptedUbusd plays ubusd's side of one recorded client: it sends the
// recorded messages to that client and checks that every message the Conn
// sends is byte for byte the one the recorded client sent. The ids are the
// recorded ones, so nothing needs mapping.
func scriptedUbusd(t *testing.T, scenario, label string) (path string, done <-chan error) {
	t.Helper()
	var s *vectors.Scenario
	all, err := vectors.Load()
	if err != nil {
		t.Fatal(err)
	}
	for i := range all {
		if all[i].Name == scenario {
			s = &all[i]
		}
	}
	if s == nil {
		t.Fatalf("no vector %s", scenario)
	}
	path = filepath.Join(t.TempDir(), "ubus.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan error, 1)
	go func() {
		defer ln.Close()
		nc, err := ln.Accept()
		if err != nil {
			ch <- err
			return
		}
		defer nc.Close()
		for i, vm := range s.Messages {
			if vm.Client != label {
				continue
			}
			if vm.FromBroker() {
				if _, err := nc.Write(vm.Bytes); err != nil {
					ch <- err
					return
				}
				continue
			}
			nc.SetReadDeadline(time.Now().Add(3 * time.Second))
			m, err := ReadMessage(nc)
			if err != nil {
				ch <- fmt.Errorf("message %d (%s): %w", i, vm.Type, err)
				return
			}
			got, _ := m.Encode()
			if !bytes.Equal(got, vm.Bytes) {
				ch <- fmt.Errorf("message %d (%s):\nConn sent %x\nrecorded  %x", i, vm.Type, got, vm.Bytes)
				return
			}
		}
		// Give the Conn time to see the last messages before closing.
		time.Sleep(50 * time.Millisecond)
		ch <- nil
	}()
	return path, ch
}

func waitScript(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("scripted ubusd did not finish")
	}
}

// demoObject is the object the recordings publish from ucode.
func demoObject() *Object {
	type answer struct {
		Msg    string         `json:"msg"`
		N      int            `json:"n"`
		Big    int64          `json:"big"`
		Pi     float64        `json:"pi"`
		OK     bool           `json:"ok"`
		List   []any          `json:"list"`
		Nested map[string]any `json:"nested"`
	}
	return &Object{Name: "demo", Methods: []Method{
		{Name: "hello", Signature: []Arg{{"name", TypeString}, {"count", TypeInt32}, {"flag", TypeBool}},
			Handler: func(_ context.Context, req *Request) (any, int) {
				name := "null" // ucode prints a missing argument as null
				if v, ok := req.Args.Get("name"); ok {
					name = v.(string)
				}
				return answer{Msg: "hi " + name, N: 42, Big: 5000000000, Pi: 3.25, OK: true,
					List:   []any{1, "two", map[string]int{"three": 3}},
					Nested: map[string]any{"a": map[string]string{"b": "c"}}}, StatusOK
			}},
		{Name: "fail", Handler: func(context.Context, *Request) (any, int) { return nil, StatusNotFound }},
	}}
}

func dial(t *testing.T, path string) *Conn {
	t.Helper()
	c, err := Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// The object side: registration, answers with data, status-only answers and
// a method the object lacks, each exactly as libubus/ucode sent them.
func TestConnServesLikeRecordedObject(t *testing.T) {
	for _, sc := range []string{"publish_object", "call_hello_args", "call_hello_noargs", "call_fail_status", "call_missing_method"} {
		t.Run(sc, func(t *testing.T) {
			path, done := scriptedUbusd(t, sc, "object")
			c := dial(t, path)
			if err := c.AddObject(context.Background(), demoObject()); err != nil {
				t.Fatal(err)
			}
			waitScript(t, done)
		})
	}
}

// The caller side: lookup then invoke, as `ubus call` does, and the status
// codes of failures.
func TestConnCallsLikeRecordedCLI(t *testing.T) {
	cases := []struct {
		scenario, method, args string
		code                   int
	}{
		{"call_hello_args", "hello", `{"name":"world","count":7,"flag":true}`, 0},
		{"call_hello_noargs", "hello", ``, 0},
		{"call_fail_status", "fail", ``, StatusNotFound},
		{"call_missing_method", "nosuch", ``, StatusMethodNotFound},
		{"call_invalid_argument", "hello", `{"name":5}`, StatusInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.scenario, func(t *testing.T) {
			path, done := scriptedUbusd(t, tc.scenario, "caller")
			c := dial(t, path)
			var args any
			if tc.args != "" {
				args = json.RawMessage(tc.args)
			}
			got, err := c.Call(context.Background(), "demo", tc.method, args)
			var se *StatusError
			switch {
			case tc.code == 0 && err != nil:
				t.Fatal(err)
			case tc.code != 0 && (!errors.As(err, &se) || se.Code != tc.code):
				t.Fatalf("error %v, want status %d", err, tc.code)
			}
			if tc.code == 0 {
				all, _ := vectors.Load()
				for _, s := range all {
					if s.Name == tc.scenario {
						want := &bytes.Buffer{}
						json.Compact(want, s.CLI["caller"].JSON)
						if j, _ := json.Marshal(got); string(j) != want.String() {
							t.Errorf("answer %s, ubus printed %s", j, want)
						}
					}
				}
			}
			waitScript(t, done)
		})
	}
	t.Run("call_missing_object", func(t *testing.T) {
		path, done := scriptedUbusd(t, "call_missing_object", "caller")
		c := dial(t, path)
		_, err := c.Call(context.Background(), "nosuch", "hello", nil)
		if !errors.Is(err, &StatusError{Code: StatusNotFound}) {
			t.Fatalf("error %v, want Not found", err)
		}
		waitScript(t, done)
	})
}

func TestConnListsLikeRecordedCLI(t *testing.T) {
	for sc, path := range map[string]string{"list_all_verbose": "", "list_path_verbose": "demo"} {
		t.Run(sc, func(t *testing.T) {
			sock, done := scriptedUbusd(t, sc, "caller")
			c := dial(t, sock)
			objs, err := c.Lookup(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != 1 || objs[0].Path != "demo" {
				t.Fatalf("lookup gave %+v", objs)
			}
			sig, _ := json.Marshal(objs[0].Signature)
			// `ubus -v list` prints "hello":{"name":"String","count":"Integer","flag":"Boolean"}
			if want := `{"hello":{"name":3,"count":5,"flag":7},"fail":{}}`; string(sig) != want {
				t.Errorf("signature %s, want %s", sig, want)
			}
			waitScript(t, done)
		})
	}
}

func TestConnEventsLikeRecorded(t *testing.T) {
	cases := []struct {
		scenario, pattern, data string
	}{
		{"event_cli", "demo.event", `{"x":1}`},
		{"event_ucode", "demo.*", `{"x":1,"s":"text"}`},
	}
	for _, tc := range cases {
		t.Run(tc.scenario+"/listener", func(t *testing.T) {
			path, done := scriptedUbusd(t, tc.scenario, "listener")
			c := dial(t, path)
			got := make(chan string, 1)
			err := c.Listen(context.Background(), tc.pattern, func(ev string, data Table) {
				j, _ := json.Marshal(data)
				got <- ev + " " + string(j)
			})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case g := <-got:
				if want := "demo.event " + tc.data; g != want {
					t.Errorf("listener got %q, want %q", g, want)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("no event")
			}
			waitScript(t, done)
		})
		t.Run(tc.scenario+"/sender", func(t *testing.T) {
			path, done := scriptedUbusd(t, tc.scenario, "sender")
			c := dial(t, path)
			if err := c.SendEvent(context.Background(), "demo.event", json.RawMessage(tc.data)); err != nil {
				t.Fatal(err)
			}
			waitScript(t, done)
		})
	}
}

func TestConnSubscribeNotifyLikeRecorded(t *testing.T) {
	t.Run("cli/subscriber", func(t *testing.T) {
		path, done := scriptedUbusd(t, "subscribe_notify_cli", "subscriber")
		c := dial(t, path)
		got := make(chan string, 1)
		err := c.Subscribe(context.Background(), "demo", func(typ string, data Table) (any, int) {
			j, _ := json.Marshal(data)
			got <- typ + " " + string(j)
			return nil, StatusOK
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if g := <-got; g != `demo.update {"count":1,"text":"changed"}` {
			t.Errorf("notification %q", g)
		}
		waitScript(t, done)
	})
	t.Run("ucode/subscriber", func(t *testing.T) {
		path, done := scriptedUbusd(t, "subscribe_notify_ucode", "subscriber")
		c := dial(t, path)
		removed := make(chan struct{})
		err := c.Subscribe(context.Background(), "demo", func(string, Table) (any, int) {
			return Table{{"ack", true}}, StatusOK
		}, func() { close(removed) })
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-removed:
		case <-time.After(30 * time.Second):
			t.Fatal("UNSUBSCRIBE did not reach the removed callback")
		}
		waitScript(t, done)
	})
	for _, sc := range []string{"subscribe_notify_cli", "subscribe_notify_ucode"} {
		t.Run(sc+"/object", func(t *testing.T) {
			path, done := scriptedUbusd(t, sc, "object")
			c := dial(t, path)
			obj := demoObject()
			var mu sync.Mutex
			var changes []bool
			active := make(chan bool, 2)
			obj.SubscribersChanged = func(a bool) {
				mu.Lock()
				changes = append(changes, a)
				mu.Unlock()
				active <- a
			}
			if err := c.AddObject(context.Background(), obj); err != nil {
				t.Fatal(err)
			}
			if a := <-active; !a {
				t.Fatal("first subscription change is not active")
			}
			n, err := c.Notify(context.Background(), obj, "demo.update", Table{{"count", int32(1)}, {"text", "changed"}})
			if err != nil || n != 1 {
				t.Fatalf("notify reached %d subscribers, err %v; want 1", n, err)
			}
			if sc == "subscribe_notify_ucode" {
				if err := c.RemoveObject(context.Background(), obj); err != nil {
					t.Fatal(err)
				}
			} else if a := <-active; a {
				t.Fatal("the subscriber's exit did not end the subscription")
			}
			waitScript(t, done)
		})
	}
}
