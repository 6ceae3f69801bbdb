package daemon

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fastpath-wrt/fastpath/src/logger"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/nftevents"
	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/status"
	"github.com/fastpath-wrt/fastpath/src/supervise"
	"github.com/fastpath-wrt/fastpath/src/ubus"
)

// settle is how long the loop waits for a burst of events (a bridge
// coming up fires many) to end before it re-plans once.
const settle = 300 * time.Millisecond

// Daemon is the long-running service.
type Daemon struct {
	*Reconciler
	kick chan string
	// publish sends a ubus event; a no-op until the object is registered.
	publish func(name string, data any)
	watch   blocklistWatch
	// life is the daemon's own context: every event source runs on it,
	// never on the context of the call (a ubus reload) that started it.
	life context.Context
	// passes are the passes asked for by ubus calls and signals; only the
	// loop runs them, one at a time.
	passes passQueue
	// runPass is one reconcile pass (d.reconcile; tests replace it).
	runPass func(ctx context.Context, why string) status.Status
	// mode is the effective mode the last pass left, to tell a change.
	mode string
}

// New makes a daemon over a reconciler that lives until ctx ends.
func New(ctx context.Context, r *Reconciler) *Daemon {
	d := &Daemon{Reconciler: r, life: ctx, kick: make(chan string, 1), publish: func(string, any) {}, passes: newPassQueue()}
	d.runPass = d.reconcile
	return d
}

// Pass asks the loop for a reconcile pass and waits for it (or ctx). A
// pass already pending is joined, not added to: see passQueue.
func (d *Daemon) Pass(ctx context.Context, why string) (status.Status, error) {
	return d.passes.request(why).wait(ctx)
}

// Kick asks for a re-plan; it never blocks.
func (d *Daemon) Kick(why string) {
	select {
	case d.kick <- why:
	default:
	}
}

// IgnoreHangups makes SIGHUP harmless until Run listens for it: the
// hotplug script and the init script's reload send it whenever they like,
// and its default action would end the process. What an ignored one asked
// for, Run's first pass reads anyway. Call it first thing.
func IgnoreHangups() { signal.Ignore(syscall.SIGHUP) }

// Run reconciles now and then on every relevant event until the daemon's
// context ends. SIGHUP reloads; SIGTERM and SIGINT end the loop and leave
// the kernel state in place so a restart converges without tearing flows
// down.
func (d *Daemon) Run() error {
	ctx, cancel := context.WithCancel(d.life)
	defer cancel()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	// SIGHUPs join the pending pass at once, off the loop: a burst of
	// them while a pass runs can neither queue up nor crowd out a SIGTERM.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				d.passes.request("SIGHUP")
			}
		}
	}()

	// One socket reads nftables' notifications for every watcher (the
	// monitor below, the block-list watch of nftables sets).
	if hub, err := nftevents.Open(0); err != nil {
		d.Log.WithError(err).Warn("nftables notifications: each watcher tries a socket of its own")
	} else {
		d.nft.UseEvents(hub)
		d.cut.UseEvents(hub)
		supervise.Go(ctx, "nftables events", hub.Run, nil)
	}
	d.watchLinks(ctx)
	// A lost nftables event may have been a foreign delete of our table:
	// the resync is a full re-plan, which reads the kernel again.
	supervise.Go(ctx, "nftables monitor", func(ctx context.Context) error {
		return d.nft.Watch(ctx, func() { d.Kick("nftables change") })
	}, d.resyncKick("nftables monitor resync"))
	d.runPass(ctx, "start")
	return d.loop(ctx, sig)
}

// loop runs the passes that events, signals and calls ask for, one at a
// time, until the context ends or a stop signal comes.
func (d *Daemon) loop(ctx context.Context, sig <-chan os.Signal) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case s := <-sig:
			d.Log.Infof("%v: stopping, kernel state left in place", s)
			return nil
		case why := <-d.kick:
			d.settle(ctx)
			d.passes.request(why)
		case <-d.passes.wake:
		}
		if p := d.passes.take(); p != nil {
			p.st = d.runPass(ctx, p.reason())
			close(p.done)
		}
	}
}

// settle drains kicks until none came for the settle time.
func (d *Daemon) settle(ctx context.Context) {
	t := time.NewTimer(settle)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.kick:
			t.Reset(settle)
		case <-t.C:
			return
		}
	}
}

// reconcile runs one pass. A change of the effective mode is announced
// as a fastpath.mode event, whoever asked for the pass.
func (d *Daemon) reconcile(ctx context.Context, why string) status.Status {
	if d.mode == "" { // the first pass: what the kernel has before it
		d.mode = d.Status(ctx).Mode.Effective
	}
	before := d.mode
	st, err := d.Reconcile(ctx)
	d.mode = st.Mode.Effective
	log := d.Log.WithField("trigger", why)
	if err != nil {
		log.WithError(err).Error("reconcile")
	} else {
		log.WithFields(logger.Fields{"mode": st.Mode.Effective, "devices": st.Flowtable.Devices}).Debug("reconciled")
	}
	d.syncBlocklists()
	if before != st.Mode.Effective {
		log.Infof("mode %s: %s", st.Mode.Effective, st.Mode.Reason)
		d.event(rpc.EventMode, rpc.ModeEvent{Previous: before, Mode: st.Mode})
	}
	return st
}

func (d *Daemon) event(name string, data any) { d.publish(name, data) }

// watchLinks kicks a re-plan on link and IPv4 route changes, the inputs
// of a plan that are not UCI (devices, and the routes to IPIP peers). One
// rtnetlink socket on their multicast groups; what changed is read from
// the system again by the next observation, so messages are not decoded.
// Address events are left out: a plan does not depend on addresses, and
// IPv6 autoconfiguration would re-plan for nothing. An overrun (ENOBUFS)
// ends the watch; the supervisor re-plans and opens a new socket.
func (d *Daemon) watchLinks(ctx context.Context) {
	groups := uint32(unix.RTMGRP_LINK | unix.RTMGRP_IPV4_ROUTE)
	supervise.Go(ctx, "links and routes", func(ctx context.Context) error {
		conn, err := netlink.Dial(unix.NETLINK_ROUTE, &netlink.Config{Groups: groups})
		if err != nil {
			return fmt.Errorf("rtnetlink socket for link and route events: %w", err)
		}
		stop := context.AfterFunc(ctx, func() { conn.Close() })
		defer stop()
		defer conn.Close()
		for {
			msgs, err := conn.Receive()
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				return fmt.Errorf("rtnetlink events: %w", err)
			}
			if len(msgs) > 0 {
				d.Kick("link or route change")
			}
		}
	}, d.resyncKick("rtnetlink resync"))
}

// resyncKick is the resync of a source whose events only ask for a re-plan:
// a re-plan reads everything again, so it covers whatever was lost.
func (d *Daemon) resyncKick(why string) func(context.Context) error {
	return func(context.Context) error {
		d.Kick(why)
		return nil
	}
}

// Serve runs the daemon with its ubus object registered on the socket
// ("" for the default paths). ubusd may come and go: the object is
// registered again whenever it is back, and the daemon never waits for it.
func Serve(ctx context.Context, r *Reconciler, socket string) error {
	d := New(ctx, r)
	supervise.Default.OnChange = func(s supervise.Source) {
		switch s.State {
		case supervise.StateDegraded:
			d.Log.WithField("watcher", s.Name).Warnf("event source failed, resyncing and restarting: %s", s.LastError)
		case supervise.StateRunning:
			if s.Restarts > 0 {
				d.Log.WithField("watcher", s.Name).Infof("event source running again (restart %d)", s.Restarts)
			}
		}
	}
	obj := rpc.New(controller{d}, d.Log.WithField("part", "ubus"))
	client := ubus.NewClient(socket, d.Log.WithField("part", "ubus"))
	if err := obj.Register(client); err != nil {
		d.Log.WithError(err).Warn("registering the fastpath ubus object")
	}
	d.Ubus = socket
	client.Start()
	defer client.Close()
	defer obj.Close()
	d.publish = obj.Event
	return d.Run()
}
