package daemon

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/mdlayher/netlink"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/status"
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
	// runMu serialises whole reconcile passes: the loop and ubus calls.
	runMu sync.Mutex
	// mode is the effective mode the last pass left, to tell a change.
	mode string
}

// New makes a daemon over a reconciler.
func New(r *Reconciler) *Daemon {
	return &Daemon{Reconciler: r, kick: make(chan string, 1), publish: func(string, any) {}}
}

// Kick asks for a re-plan; it never blocks.
func (d *Daemon) Kick(why string) {
	select {
	case d.kick <- why:
	default:
	}
}

// Run reconciles now and then on every relevant event until ctx ends.
// SIGHUP reloads; SIGTERM and SIGINT end the loop and leave the kernel
// state in place so a restart converges without tearing flows down.
func (d *Daemon) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)

	d.watchLinks(ctx)
	go func() {
		if err := d.nft.Watch(ctx, func() { d.Kick("nftables change") }); err != nil && ctx.Err() == nil {
			d.Log.WithError(err).Warn("nftables monitor stopped: a foreign delete of our table is repaired only at the next event")
		}
	}()
	d.reconcile(ctx, "start", true)
	for {
		select {
		case <-ctx.Done():
			return nil
		case s := <-sig:
			if s == syscall.SIGHUP {
				d.reconcile(ctx, "SIGHUP", true)
				continue
			}
			d.Log.Infof("%v: stopping, kernel state left in place", s)
			return nil
		case why := <-d.kick:
			d.settle(ctx)
			d.reconcile(ctx, why, true)
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
// as a fastpath.mode event unless the caller is the ubus object, which
// announces the change in its own answer's wake.
func (d *Daemon) reconcile(ctx context.Context, why string, announce bool) status.Status {
	d.runMu.Lock()
	defer d.runMu.Unlock()
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
		log.WithFields(logrus.Fields{"mode": st.Mode.Effective, "devices": st.Flowtable.Devices}).Debug("reconciled")
	}
	d.syncBlocklists(ctx)
	if before != st.Mode.Effective {
		log.Infof("mode %s: %s", st.Mode.Effective, st.Mode.Reason)
		if announce {
			d.event(rpc.EventMode, rpc.ModeEvent{Previous: before, Mode: st.Mode})
		}
	}
	return st
}

func (d *Daemon) event(name string, data any) { d.publish(name, data) }

// watchLinks kicks a re-plan on link and IPv4 route changes, the inputs
// of a plan that are not UCI (devices, and the routes to IPIP peers). One
// rtnetlink socket on their multicast groups; what changed is read from
// the system again by the next observation, so messages are not decoded.
// Address events are left out: a plan does not depend on addresses, and
// IPv6 autoconfiguration would re-plan for nothing.
func (d *Daemon) watchLinks(ctx context.Context) {
	groups := uint32(unix.RTMGRP_LINK | unix.RTMGRP_IPV4_ROUTE)
	conn, err := netlink.Dial(unix.NETLINK_ROUTE, &netlink.Config{Groups: groups})
	if err != nil {
		d.Log.WithError(err).Warn("cannot watch links and routes: devices appearing later are picked up only on SIGHUP or reload")
		return
	}
	go func() {
		<-ctx.Done()
		conn.Close()
	}()
	go func() {
		for {
			msgs, err := conn.Receive()
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				// ENOBUFS: events were lost; re-planning covers them all.
				d.Log.WithError(err).Debug("rtnetlink events")
				d.Kick("rtnetlink overrun")
				continue
			}
			if len(msgs) > 0 {
				d.Kick("link or route change")
			}
		}
	}()
}

// Serve runs the daemon with its ubus object registered on the socket
// ("" for the default paths). ubusd may come and go: the object is
// registered again whenever it is back, and the daemon never waits for it.
func Serve(ctx context.Context, r *Reconciler, socket string) error {
	d := New(r)
	obj := rpc.New(controller{d}, d.Log.WithField("part", "ubus"))
	client := ubus.NewClient(socket, d.Log.WithField("part", "ubus"))
	if err := obj.Register(client); err != nil {
		d.Log.WithError(err).Warn("registering the fastpath ubus object")
	}
	client.Start()
	defer client.Close()
	defer obj.Close()
	d.publish = obj.Event
	return d.Run(ctx)
}
