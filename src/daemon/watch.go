package daemon

import (
	"context"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/supervise"
)

// blocklistWatch runs the cut engine's block-list watcher for one config
// and is restarted only when that config changes.
type blocklistWatch struct {
	cfg    cut.Config
	cancel context.CancelFunc
}

// syncBlocklists starts, restarts or stops watching the block lists the
// last plan names. The watch runs on the daemon's context, whatever pass
// (a ubus reload or set, SIGHUP, an event) asked for it, and under the
// supervisor: a watch that fails starts again with a fresh read of every
// list, which cuts what was added while it was down.
func (d *Daemon) syncBlocklists() {
	d.mu.Lock()
	cfg := d.last.plan.Cut.Config
	d.mu.Unlock()
	if !cfg.Enabled {
		cfg.Blocklists = nil
	}
	if d.watch.cancel != nil && d.watch.cfg.Equal(cfg) {
		return
	}
	if d.watch.cancel != nil {
		d.watch.cancel()
		d.watch.cancel = nil
	}
	d.watch.cfg = cfg
	if len(cfg.Blocklists) == 0 {
		return
	}
	wctx, cancel := context.WithCancel(d.life)
	d.watch.cancel = cancel
	// WatchBlocklists reads every list before it watches: its own start
	// is the resync.
	supervise.Go(wctx, "block lists", func(ctx context.Context) error {
		return d.cut.WatchBlocklists(ctx, cfg)
	}, nil)
}
