package daemon

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/fastpath-wrt/fastpath/src/ubus"
)

// announceTimeout bounds telling procd: it answers at once and runs the
// triggers later, so only a wedged ubusd could take longer.
const announceTimeout = 5 * time.Second

// announcer keeps what procd could not be told (announceConfig).
type announcer struct {
	call func(pkg string) error // tests' procd; nil: tellProcd

	mu     sync.Mutex
	missed string // which services still run an old config, and how to reload them
}

// announceConfig is the one way fastpath's UCI writes reach the services
// that read them, as rpcd's uci apply and /sbin/reload_config do it: one
// `service event` of type config.change per package, on which procd runs
// the reload triggers of those services. firewall4's reload is what makes
// its own flowtable follow flow_offloading; without it fw4 keeps
// offloading while fastpath reports the mode it wrote. What procd was not
// told is a warning in the log and the status until the next announcement
// (each names the firewall: every mode and every correction writes it).
func (r *Reconciler) announceConfig(ctx context.Context, pkgs []string) {
	if len(pkgs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, announceTimeout)
	var missed []string
	for _, pkg := range pkgs {
		var err error
		if r.announcer.call != nil {
			err = r.announcer.call(pkg)
		} else {
			err = tellProcd(ctx, r.Ubus, pkg)
		}
		if err != nil && pkg != "fastpath" { // the daemon plans from its own config anyway
			missed = append(missed, notReloaded(pkg, err))
		}
	}
	cancel()
	a := &r.announcer
	a.mu.Lock()
	a.missed = strings.Join(missed, "; ")
	a.mu.Unlock()
	if missed != nil {
		r.Log.Warn(a.missed)
	}
}

// configChange is the event /sbin/reload_config sends for a package.
type configChange struct {
	_    [0]func() // not comparable: no equality function in the binary (flash)
	Type string    `json:"type"`
	Data struct {
		Package string `json:"package"`
	} `json:"data"`
}

// tellProcd sends procd config.change for pkg on a connection of its own:
// a set or a correction makes a call or two, and the daemon's ubus client
// stays as small as it is.
func tellProcd(ctx context.Context, socket, pkg string) error {
	ev := configChange{Type: "config.change"}
	ev.Data.Package = pkg
	conn, err := ubus.Dial(socket)
	if err == nil {
		_, err = conn.Call(ctx, "service", "event", ev)
		conn.Close()
	}
	return err
}

// warning is what the last announcement did not reach ("" when nothing).
func (a *announcer) warning() string {
	a.mu.Lock()
	missed := a.missed
	a.mu.Unlock()
	return missed
}

// notReloaded says that the services reading pkg still run its old
// config, why, and how to reload them by hand.
func notReloaded(pkg string, err error) string {
	why := err.Error()
	if errors.Is(err, &ubus.StatusError{Code: ubus.StatusNotFound}) {
		why = `procd's ubus object "service" is not there`
	}
	service := pkg
	if pkg == "firewall" {
		service = "firewall4"
	}
	return "fastpath changed /etc/config/" + pkg + " at " + time.Now().UTC().Format(time.RFC3339) + ", but " + service +
		" was not reloaded (no config.change reached procd: " + why + "): run /etc/init.d/" + pkg + " reload"
}
