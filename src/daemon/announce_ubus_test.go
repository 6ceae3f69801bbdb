package daemon

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/ubus"
	"github.com/fastpath-wrt/fastpath/src/ubus/ubustest"
)

// procdOnBus is procd's ubus object "service" on a test broker: it keeps
// the package of every config.change event it is sent.
type procdOnBus struct {
	conn *ubus.Conn
	obj  *ubus.Object
	mu   sync.Mutex
	pkgs []string
}

func startProcd(t *testing.T, b *ubustest.Broker) *procdOnBus {
	p := &procdOnBus{conn: b.Dial(t)}
	p.obj = &ubus.Object{Name: "service", Methods: []ubus.Method{{Name: "event", Handler: p.event}}}
	p.add(t)
	return p
}

func (p *procdOnBus) event(_ context.Context, req *ubus.Request) (any, int) {
	typ, _ := req.Args.Get("type")
	data, _ := req.Args.Get("data")
	pkg, _ := data.(ubus.Table).Get("package")
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pkgs = append(p.pkgs, typ.(string)+" "+pkg.(string))
	return nil, ubus.StatusOK
}

func (p *procdOnBus) add(t *testing.T) {
	if err := p.conn.AddObject(context.Background(), p.obj); err != nil {
		t.Fatal(err)
	}
}

func (p *procdOnBus) remove(t *testing.T) {
	if err := p.conn.RemoveObject(context.Background(), p.obj); err != nil {
		t.Fatal(err)
	}
}

// took returns and forgets the events procd was sent.
func (p *procdOnBus) took() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := strings.Join(p.pkgs, ", ")
	p.pkgs = nil
	return s
}

// serveOnBroker runs the world's daemon as Serve does, on a test broker.
func serveOnBroker(t *testing.T, w *world, b *ubustest.Broker) {
	client := ubus.NewClient(b.Path(), nil)
	client.MinBackoff = 10 * time.Millisecond
	obj := rpc.New(controller{w.d}, nil)
	if err := obj.Register(client); err != nil {
		t.Fatal(err)
	}
	w.d.announcer.call = nil // the real one, on the broker
	w.d.Ubus = b.Path()
	client.Start()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.d.loop(ctx, nil); close(done) }()
	t.Cleanup(func() { cancel(); <-done; obj.Close(); client.Close() })
	ready, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	if err := client.WaitReady(ready); err != nil {
		t.Fatal(err)
	}
}

// callSet calls `ubus call fastpath set` and returns the answer's errors.
func callSet(t *testing.T, b *ubustest.Broker, mode string) string {
	t.Helper()
	return callErrors(t, b, "set", map[string]any{"mode": mode})
}

// callErrors calls a method of the fastpath object and returns the
// status it answers with: its errors, one a line.
func callErrors(t *testing.T, b *ubustest.Broker, method string, args any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	answer, err := rpc.CallFastpath(ctx, b.Path(), method, args)
	if err != nil {
		t.Fatalf("ubus call fastpath %s %v: %v", method, args, err)
	}
	var st struct{ Errors []string }
	if err := ubus.Decode(answer, &st); err != nil {
		t.Fatal(err)
	}
	return strings.Join(st.Errors, "\n")
}

// TestSetTellsProcdEachConfigItCommits: `ubus call fastpath set` (and so
// `fastpath set`) sends procd one config.change per config it wrote, as
// rpcd's uci apply does, so procd reloads firewall4 and fw4's flowtable
// follows flow_offloading. Before, nothing was sent and fw4 kept offloading
// while fastpath answered "off".
func TestSetTellsProcdEachConfigItCommits(t *testing.T) {
	w := newWorld(t, "mt7621-ax23")
	b := ubustest.Start(t)
	procd := startProcd(t, b)
	serveOnBroker(t, w, b)
	for _, c := range []struct{ mode, want string }{
		{"off", "config.change firewall"},
		{"software", "config.change firewall"},
		{"hardware", "config.change firewall, config.change fastpath"},
		{"auto", "config.change firewall, config.change fastpath"},
	} {
		errs := callSet(t, b, c.mode)
		if got := procd.took(); got != c.want {
			t.Errorf("set %s: procd was sent %q, want %q", c.mode, got, c.want)
		}
		if strings.Contains(errs, "not reloaded") {
			t.Errorf("set %s with procd there: the answer warns\n%s", c.mode, errs)
		}
	}
}

// TestSetWithoutProcdSaysFirewall4WasNotReloaded: with no "service" object
// on ubus (no procd), the answer and every status after it say that
// firewall4 still runs its old ruleset and how to reload it, until an
// announcement reaches procd again.
func TestSetWithoutProcdSaysFirewall4WasNotReloaded(t *testing.T) {
	w := newWorld(t, "mt7621-ax23")
	b := ubustest.Start(t)
	procd := startProcd(t, b)
	serveOnBroker(t, w, b)
	procd.remove(t)
	want := []string{"fastpath changed /etc/config/firewall at ", "but firewall4 was not reloaded",
		`procd's ubus object "service" is not there`, "run /etc/init.d/firewall reload"}
	answer := callSet(t, b, "off")
	for _, s := range want {
		if !strings.Contains(answer, s) {
			t.Errorf("set off without procd: the answer's errors lack %q\n%s", s, answer)
		}
	}
	if errs := callErrors(t, b, "status", nil); !strings.Contains(errs, want[1]) {
		t.Errorf("status after set off without procd does not warn\n%s", errs)
	}
	procd.add(t)
	if errs := callSet(t, b, "off"); strings.Contains(errs, "not reloaded") {
		t.Errorf("set off with procd back: the warning stayed\n%s", errs)
	}
	if got := procd.took(); got != "config.change firewall" {
		t.Errorf("set off with procd back: procd was sent %q", got)
	}
}
