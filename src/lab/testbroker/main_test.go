package main

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/ubus"
	"github.com/fastpath-wrt/fastpath/src/ubus/ubustest"
)

// captureStdout runs f with os.Stdout redirected and returns what it printed.
func captureStdout(t *testing.T, f func() int) (string, int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	rc := f()
	os.Stdout = old
	w.Close()
	out, _ := io.ReadAll(r)
	return string(out), rc
}

// The client commands print and exit as the ubus CLI does.
func TestClientCommandsLikeUbusCLI(t *testing.T) {
	b := ubustest.Start(t)
	sock := b.Path()
	owner := b.Dial(t)
	err := owner.AddObject(context.Background(), &ubus.Object{Name: "demo", Methods: []ubus.Method{{
		Name:      "hello",
		Signature: []ubus.Arg{{Name: "name", Type: ubus.TypeString}, {Name: "count", Type: ubus.TypeInt32}},
		Handler: func(_ context.Context, r *ubus.Request) (any, int) {
			return ubus.Table{{Name: "msg", Value: "hi"}, {Name: "pi", Value: 3.25}}, 0
		},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cases := []struct {
		args []string
		out  string
		rc   int
	}{
		{[]string{"call", "demo", "hello", `{"name":"x"}`}, "{\n\t\"msg\": \"hi\",\n\t\"pi\": 3.250000\n}\n", 0},
		{[]string{"call", "demo", "nosuch"}, "", 253},
		{[]string{"call", "nosuch", "hello"}, "", 4},
		{[]string{"call", "demo", "hello", `{"name":5}`}, "{\n\t\"error\": \"name: must be a string, got an integer — pass e.g. {\\\"name\\\": \\\"text\\\"}\"\n}\n", 254},
		{[]string{"list", "demo"}, "demo\n", 0},
	}
	for _, tc := range cases {
		out, rc := captureStdout(t, func() int { return client(ctx, sock, false, tc.args) })
		if out != tc.out || rc != tc.rc {
			t.Errorf("%v: printed %q exit %d, want %q exit %d", tc.args, out, rc, tc.out, tc.rc)
		}
	}
	out, _ := captureStdout(t, func() int { return client(ctx, sock, true, []string{"list"}) })
	if want := "'demo' @"; len(out) < 20 || out[:len(want)] != want || out[17:] != "\t\"hello\":{\"name\":\"String\",\"count\":\"Integer\"}\n" {
		t.Errorf("list -v printed %q", out)
	}
}
