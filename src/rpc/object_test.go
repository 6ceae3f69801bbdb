package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/ubus"
	"github.com/fastpath-wrt/fastpath/src/ubus/ubustest"
)

type harness struct {
	sock   string
	broker *ubustest.Broker
	fake   *fakeController
	obj    *Object
	client *ubus.Client
}

// start runs a broker and the fastpath object on it, as the daemon does.
func start(t *testing.T) *harness {
	t.Helper()
	h := &harness{broker: ubustest.Start(t), fake: newFake()}
	h.sock = h.broker.Path()
	h.client = ubus.NewClient(h.sock, nil)
	h.client.MinBackoff = 10 * time.Millisecond
	h.obj = New(h.fake, nil)
	h.fake.publish = h.obj.Event
	if err := h.obj.Register(h.client); err != nil {
		t.Fatal(err)
	}
	h.client.Start()
	t.Cleanup(func() { h.obj.Close(); h.client.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.client.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) call(t *testing.T, method, args string) (string, error) {
	t.Helper()
	var a any
	if args != "" {
		a = json.RawMessage(args)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	answer, err := CallFastpath(ctx, h.sock, method, a)
	if answer == nil {
		return "", err
	}
	j, jerr := answer.MarshalJSON()
	if jerr != nil {
		t.Fatal(jerr)
	}
	return string(j), err
}

func TestMethodsAnswer(t *testing.T) {
	h := start(t)
	cases := []struct {
		method, args string
		want         []string // fragments of the JSON answer, in order
		check        func(t *testing.T, f *fakeController)
	}{
		{"status", "", []string{`{"version":"test","mode":{"requested":"software","effective":"software"`, `"platform":{"soc":"qca9558"`}, nil},
		{"capabilities", "", []string{`{"platform":{"soc":"qca9558"`, `"kernel":{"release":"","flowtable":true`, `"modes":["off","software"]}`}, nil},
		{"flows", "", []string{`{"flows":[{"id":1,"family":"ipv4","proto":"tcp"`, `"bytes":5000000000`, `"total":2,"limit":100,"truncated":false}`},
			func(t *testing.T, f *fakeController) {
				if f.lastQ != (FlowQuery{Limit: 100}) {
					t.Errorf("query %+v, want the default limit only", f.lastQ)
				}
			}},
		{"flows", `{"offload":"software","proto":"TCP","address":"192.168.1.0/24","limit":1}`, []string{`"id":1`, `"total":2,"limit":1,"truncated":false}`},
			func(t *testing.T, f *fakeController) {
				if want := (FlowQuery{Offload: "software", Proto: "tcp", Address: "192.168.1.0/24", Limit: 1}); f.lastQ != want {
					t.Errorf("query %+v, want %+v", f.lastQ, want)
				}
			}},
		{"set", `{"mode":"off"}`, []string{`"mode":{"requested":"off","effective":"off","reason":"off requested"}`}, nil},
		{"set", `{"mode":"auto"}`, []string{`"requested":"auto"`}, nil},
		{"reload", "", []string{`{"version":"test"`}, nil},
		{"cut", `{"address":"203.0.113.9","reason":"blocklist hit"}`, []string{`{"cuts":[{"original":{"proto":"tcp","src":"203.0.113.9"`, `"reason":"blocklist hit","trigger":"ubus","since":"2026-11-30T05:00:00Z"`, `"count":1,"in_fastpath":1,"conntrack_only":0}`},
			func(t *testing.T, f *fakeController) {
				if f.lastCut.Address != "203.0.113.9" || f.lastCut.Trigger != "ubus" {
					t.Errorf("cut request %+v", f.lastCut)
				}
			}},
		{"cut", `{"proto":"udp","src":"2001:db8::1","dst":"2001:db8::53","sport":5300,"dport":53}`, []string{`"original":{"proto":"udp","src":"2001:db8::1","dst":"2001:db8::53","sport":5300,"dport":53}`}, nil},
		{"uncut", `{"address":"10.0.0.0/8"}`, []string{`{"released":1}`}, nil},
		{"uncut", `{"proto":"tcp","src":"::ffff:192.0.2.1","dst":"192.0.2.2","sport":1,"dport":65535}`, []string{`{"released":1}`},
			func(t *testing.T, f *fakeController) {
				if f.lastCut.Tuple.Src != "192.0.2.1" {
					t.Errorf("v4-mapped source kept as %q, want 192.0.2.1", f.lastCut.Tuple.Src)
				}
			}},
		{"verdict", `{"proto":"tcp","src":"192.0.2.1","dst":"192.0.2.2","sport":1000,"dport":443,"verdict":"drop","reason":"ips"}`, []string{`{"cuts":[{"original":{"proto":"tcp"`, `"count":1,"in_fastpath":0,"conntrack_only":1,"released":0}`},
			func(t *testing.T, f *fakeController) {
				if f.lastVerd.Verdict != "drop" || f.lastVerd.Reason != "ips" || f.lastVerd.Trigger != "ubus" {
					t.Errorf("verdict request %+v", f.lastVerd)
				}
			}},
		{"verdict", `{"proto":"tcp","src":"192.0.2.1","dst":"192.0.2.2","sport":1000,"dport":443,"verdict":"forward"}`, []string{`{"cuts":null,"count":0,"in_fastpath":0,"conntrack_only":0,"released":1}`}, nil},
		{"cuts", "", []string{`{"enabled":true,"in_fastpath":true,"reason":"netdev ingress available"`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.method+tc.args, func(t *testing.T) {
			got, err := h.call(t, tc.method, tc.args)
			if err != nil {
				t.Fatalf("%v (answer %s)", err, got)
			}
			rest := got
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("answer lacks (in order) %s\n%s", w, got)
				}
				rest = rest[i+len(w):]
			}
			if tc.check != nil {
				h.fake.mu.Lock()
				tc.check(t, h.fake)
				h.fake.mu.Unlock()
			}
		})
	}
}

func TestBadArgumentsAreRefusedBeforeTheController(t *testing.T) {
	h := start(t)
	cases := []struct{ method, args, want string }{
		{"flows", `{"limit":0}`, `limit: 0 is out of range — use 1 to 10000 (default 100)`},
		{"flows", `{"limit":10001}`, `limit: 10001 is out of range`},
		{"flows", `{"limit":"5"}`, `limit: must be an integer, got a string`},
		{"flows", `{"offload":"yes"}`, `offload: "yes" is not an offload filter — use any, software, hardware or none`},
		{"flows", `{"proto":"sctp"}`, `proto: "sctp" is not a protocol fastpath lists`},
		{"flows", `{"address":"10.0.0.300"}`, `address: "10.0.0.300" is not an IP address or CIDR`},
		{"set", ``, `mode: missing — pass one of off, software, hardware or auto`},
		{"set", `{"mode":"turbo"}`, `mode: "turbo" is not a mode — use off, software, hardware or auto`},
		{"set", `{"mode":1}`, `mode: must be a string, got an integer`},
		{"cut", ``, `address: missing — pass an address`},
		{"cut", `{"address":"192.0.2.1","proto":"tcp"}`, `address: given together with a 5-tuple`},
		{"cut", `{"address":"192.0.2.1/33"}`, `address: "192.0.2.1/33" is not an IP address or CIDR`},
		{"cut", `{"proto":"icmp","src":"192.0.2.1","dst":"192.0.2.2","sport":1,"dport":2}`, `proto: "icmp" is not a protocol that can be cut — use tcp or udp`},
		{"cut", `{"proto":"tcp","src":"192.0.2.1","dst":"192.0.2.2","sport":1}`, `dport: missing — a 5-tuple needs proto, src, dst, sport and dport`},
		{"cut", `{"proto":"tcp","src":"192.0.2.0/24","dst":"192.0.2.2","sport":1,"dport":2}`, `src: "192.0.2.0/24" is not an IP address`},
		{"cut", `{"proto":"tcp","src":"192.0.2.1","dst":"2001:db8::1","sport":1,"dport":2}`, `dst: 2001:db8::1 and src 192.0.2.1 are of different families`},
		{"uncut", `{"proto":"udp","src":"192.0.2.1","dst":"192.0.2.2","sport":0,"dport":2}`, `sport: 0 is not a port — use 1 to 65535`},
		{"uncut", `{"proto":"udp","src":"192.0.2.1","dst":"192.0.2.2","sport":1,"dport":65536}`, `dport: 65536 is not a port`},
		{"verdict", `{"proto":"tcp","src":"192.0.2.1","dst":"192.0.2.2","sport":1,"dport":2}`, `verdict: missing — pass "drop"`},
		{"verdict", `{"proto":"tcp","src":"192.0.2.1","dst":"192.0.2.2","sport":1,"dport":2,"verdict":"accept"}`, `verdict: "accept" is not a verdict — use drop or forward`},
		{"verdict", `{"verdict":"drop"}`, `proto: missing — a 5-tuple needs`},
	}
	for _, tc := range cases {
		t.Run(tc.method+tc.args, func(t *testing.T) {
			got, err := h.call(t, tc.method, tc.args)
			var se *ubus.StatusError
			if !errors.As(err, &se) || se.Code != ubus.StatusInvalidArgument {
				t.Fatalf("error %v, want INVALID_ARGUMENT (answer %s)", err, got)
			}
			if !strings.HasPrefix(se.Message, tc.want) {
				t.Errorf("error text %q\nwant it to start %q", se.Message, tc.want)
			}
			var answer map[string]string
			if json.Unmarshal([]byte(got), &answer) != nil || answer["error"] != se.Message {
				t.Errorf("answer %s, want {\"error\": ...}", got)
			}
		})
	}
	if calls := h.fake.called(); len(calls) != 0 {
		t.Errorf("controller was asked %v for bad arguments", calls)
	}
}

func TestControllerErrorsMapToStatus(t *testing.T) {
	h := start(t)
	h.fake.err = fmt.Errorf("flowtable: %w (CONFIG_NF_FLOW_TABLE)", ErrNotSupported)
	_, err := h.call(t, "set", `{"mode":"software"}`)
	var se *ubus.StatusError
	if !errors.As(err, &se) || se.Code != ubus.StatusNotSupported || !strings.Contains(se.Message, "CONFIG_NF_FLOW_TABLE") {
		t.Fatalf("missing kernel feature: %v, want NOT_SUPPORTED naming the feature", err)
	}
	h.fake.err = errors.New("writing /etc/config/firewall: read-only file system")
	_, err = h.call(t, "reload", "")
	if !errors.As(err, &se) || se.Code != ubus.StatusUnknownError || !strings.Contains(se.Message, "read-only file system") {
		t.Fatalf("controller failure: %v, want UNKNOWN_ERROR with the text", err)
	}
	h.fake.err = &ArgumentError{"mode", "hardware is not possible on qca9558", "use software"}
	_, err = h.call(t, "set", `{"mode":"hardware"}`)
	if !errors.As(err, &se) || se.Code != ubus.StatusInvalidArgument {
		t.Fatalf("controller argument error: %v, want INVALID_ARGUMENT", err)
	}
}

func TestSignaturesAsUbusListsThem(t *testing.T) {
	h := start(t)
	c, err := ubus.Dial(h.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	objs, err := c.Lookup(context.Background(), ObjectName)
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := json.Marshal(objs[0].Signature)
	// 3 = String, 5 = Integer: `ubus -v list fastpath` prints them by name.
	want := `{"status":{},"capabilities":{},"flows":{"offload":3,"proto":3,"address":3,"limit":5},"cuts":{"offset":5,"limit":5},` +
		`"why":{"address":3,"proto":3,"src":3,"dst":3,"sport":5,"dport":5,"limit":5},` +
		`"set":{"mode":3},"reload":{},` +
		`"cut":{"address":3,"proto":3,"src":3,"dst":3,"sport":5,"dport":5,"reason":3,"force":7,"local":7},` +
		`"uncut":{"address":3,"proto":3,"src":3,"dst":3,"sport":5,"dport":5},` +
		`"verdict":{"proto":3,"src":3,"dst":3,"sport":5,"dport":5,"verdict":3,"reason":3}}`
	if string(sig) != want {
		t.Errorf("signature\n%s\nwant\n%s", sig, want)
	}
}

func TestEventsReachListenersAndSubscribers(t *testing.T) {
	h := start(t)
	c, err := ubus.Dial(h.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	events := make(chan string, 10)
	if err := c.Listen(context.Background(), "fastpath.*", func(ev string, data ubus.Table) {
		j, _ := json.Marshal(data)
		events <- ev + " " + string(j)
	}); err != nil {
		t.Fatal(err)
	}
	notes := make(chan string, 10)
	if err := c.Subscribe(context.Background(), ObjectName, func(typ string, data ubus.Table) (any, int) {
		j, _ := json.Marshal(data)
		notes <- typ + " " + string(j)
		return nil, 0
	}, nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !h.obj.UbusObject().HasSubscribers(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the subscription did not reach the object in 30 s")
		}
	}
	if _, err := h.call(t, "set", `{"mode":"off"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := h.call(t, "cut", `{"address":"203.0.113.9","reason":"test"}`); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`fastpath.mode {"previous":"software","mode":{"requested":"off","effective":"off","reason":"off requested"}}`,
		`fastpath.cut {"action":"cut","address":"203.0.113.9","reason":"test","trigger":"ubus","count":1}`,
	}
	for _, ch := range []chan string{events, notes} {
		for _, w := range want {
			select {
			case got := <-ch:
				if got != w {
					t.Errorf("got  %s\nwant %s", got, w)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("no %s", w)
			}
		}
	}
	// Setting the mode it already has changes nothing: no event. A cut
	// after it does announce itself, and events keep their order, so the
	// next event must be that cut's.
	if _, err := h.call(t, "set", `{"mode":"off"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := h.call(t, "cut", `{"address":"203.0.113.10","reason":"barrier"}`); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-events:
		if want := `fastpath.cut {"action":"cut","address":"203.0.113.10","reason":"barrier","trigger":"ubus","count":1}`; got != want {
			t.Errorf("event %s, want only the cut's %s (none for a mode that did not change)", got, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no event for the cut after the unchanged mode")
	}
}

func TestObjectSurvivesUbusdRestart(t *testing.T) {
	h := start(t)
	if _, err := h.call(t, "status", ""); err != nil {
		t.Fatal(err)
	}
	h.broker.Close()
	var err error
	if h.broker, err = ubustest.Listen(h.sock); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // the reconnect, on a loaded machine
	for {
		_, err = h.call(t, "status", "")
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("no status answer within 30 s after ubusd restarted: %v", err)
	}
	if got, err := h.call(t, "flows", `{"limit":1}`); err != nil || !strings.Contains(got, `"limit":1`) {
		t.Fatalf("flows after restart: %s %v", got, err)
	}
}

func TestDaemonNotRunning(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "ubus.sock")
	_, err := CallFastpath(context.Background(), sock, "status", nil)
	if !errors.Is(err, ErrDaemonNotRunning) {
		t.Fatalf("no ubusd: %v", err)
	}
	b, err := ubustest.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = CallFastpath(context.Background(), sock, "status", nil)
	if !errors.Is(err, ErrDaemonNotRunning) || !strings.Contains(err.Error(), "/etc/init.d/fastpath start") {
		t.Fatalf("no fastpath object: %v", err)
	}
}

func TestLargeFlowListsAreTrimmedToFit(t *testing.T) {
	h := start(t)
	one := h.fake.flows[0]
	h.fake.flows = nil
	for i := 0; i < MaxFlowLimit; i++ {
		f := one
		f.ID = uint32(i)
		h.fake.flows = append(h.fake.flows, f)
	}
	got, err := h.call(t, "flows", `{"limit":10000}`)
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Flows     []json.RawMessage `json:"flows"`
		Total     int               `json:"total"`
		Truncated bool              `json:"truncated"`
	}
	if err := json.Unmarshal([]byte(got), &a); err != nil {
		t.Fatal(err)
	}
	if !a.Truncated || a.Total != MaxFlowLimit || len(a.Flows) == 0 || len(a.Flows) >= MaxFlowLimit {
		t.Fatalf("%d flows of total %d, truncated %v: want a trimmed, flagged list", len(a.Flows), a.Total, a.Truncated)
	}
}
