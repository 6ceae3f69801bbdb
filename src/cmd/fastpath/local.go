package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fastpath-wrt/fastpath/src/logger"

	"github.com/fastpath-wrt/fastpath/src/daemon"
	"github.com/fastpath-wrt/fastpath/src/observe"
	"github.com/fastpath-wrt/fastpath/src/plan"
	"github.com/fastpath-wrt/fastpath/src/report"
	"github.com/fastpath-wrt/fastpath/src/ubus"
	"github.com/fastpath-wrt/fastpath/src/version"
)

// options are the flags every command shares.
type options struct {
	root    string
	json    bool
	verbose bool
	socket  string
}

func newFlags(name string, o *options, withJSON bool) *flagSet {
	fs := newFlagSet("fastpath " + name)
	fs.StringVar(&o.root, "root", "/", "read every file (procfs, sysfs, device tree, /etc, /tmp/sysinfo) below `DIR`")
	fs.BoolVar(&o.verbose, "v", false, "debug logging")
	fs.StringVar(&o.socket, "ubus", "", "ubus socket `PATH` (default /var/run/ubus/ubus.sock, then /var/run/ubus.sock)")
	if withJSON {
		fs.BoolVar(&o.json, "json", false, "JSON output for scripts")
	}
	return fs
}

func newLog(o options) *logger.Entry {
	l := logger.New()
	if o.verbose {
		l.SetLevel(logger.DebugLevel)
	}
	return logger.NewEntry(l)
}

// printJSON prints v as JSON indented by two spaces, keys in field order.
func printJSON(v any) error {
	b, err := ubus.AppendJSONIndent(nil, v, "  ")
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(append(b, '\n'))
	return err
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "fastpath: "+format+"\n", args...)
	return 1
}

func runVersion(args []string) int {
	fmt.Println("fastpath", version.Version)
	return 0
}

func runPrint(args []string) int {
	var o options
	if err := parseNone(newFlags("print", &o, true), args); err != nil {
		return 2
	}
	snap, err := observe.Observe(o.root)
	if err != nil {
		return fail("%v", err)
	}
	out := report.NewPrintout(snap, plan.Make(snap, plan.Constraints{}))
	if !o.json {
		fmt.Print(out.Text())
	} else if err := printJSON(out); err != nil {
		return fail("%v", err)
	}
	return 0
}

func runApply(args []string) int {
	var o options
	if err := parseNone(newFlags("apply", &o, true), args); err != nil {
		return 2
	}
	r, err := daemon.NewReconciler(o.root, newLog(o))
	if err != nil {
		return fail("%v", err)
	}
	defer r.Close()
	r.Ubus = o.socket
	st, err := r.Reconcile(context.Background())
	if !o.json {
		fmt.Print(report.StatusText(st))
	} else if perr := printJSON(st); perr != nil {
		return fail("%v", perr)
	}
	if err != nil {
		return fail("%v", err)
	}
	return 0
}

func runDaemon(args []string) int {
	var o options
	var cleanup bool
	fs := newFlags("daemon", &o, false)
	fs.BoolVar(&cleanup, "cleanup", false, "remove fastpath's tables (flowtable, cut) and exit")
	if err := parseNone(fs, args); err != nil {
		return 2
	}
	daemon.IgnoreHangups()
	log := newLog(o)
	// One daemon per router; a cleanup waits for a stopping one to end.
	wait := 5 * time.Second
	if cleanup {
		wait = 15 * time.Second
	}
	release, err := daemon.Lock(o.root, wait)
	if err != nil {
		return fail("%v", err)
	}
	defer release()
	r, err := daemon.NewReconciler(o.root, log)
	if err != nil {
		return fail("%v", err)
	}
	defer r.Close()
	if cleanup {
		if err := r.Cleanup(); err != nil {
			return fail("cleanup: %v", err)
		}
		log.Info("fastpath tables removed")
		return 0
	}
	log.Infof("fastpath %s starting", version.Version)
	if err := daemon.Serve(context.Background(), r, o.socket); err != nil {
		return fail("%v", err)
	}
	return 0
}

// localStatus reads the kernel without the daemon: the plan as it would
// be made now beside what the kernel has.
func localStatus(o options) (any, error) {
	r, err := daemon.NewReconciler(o.root, newLog(o))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := r.Observe(); err != nil && !errors.Is(err, daemon.ErrNotApplied) {
		return nil, err
	}
	return r.Status(context.Background()), nil
}
