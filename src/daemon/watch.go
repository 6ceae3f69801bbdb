package daemon

import (
	"context"
	"reflect"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

// blocklistWatch runs the cut engine's block-list watcher for one config
// and is restarted only when that config changes.
type blocklistWatch struct {
	cfg    cut.Config
	cancel context.CancelFunc
}

// syncBlocklists starts, restarts or stops watching the block lists the
// last plan names.
func (d *Daemon) syncBlocklists(ctx context.Context) {
	d.mu.Lock()
	cfg := d.last.plan.Cut.Config
	d.mu.Unlock()
	if !cfg.Enabled {
		cfg.Blocklists = nil
	}
	if d.watch.cancel != nil && reflect.DeepEqual(d.watch.cfg, cfg) {
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
	wctx, cancel := context.WithCancel(ctx)
	d.watch.cancel = cancel
	go func() {
		if err := d.cut.WatchBlocklists(wctx, cfg); err != nil && wctx.Err() == nil {
			d.Log.WithError(err).Error("block lists are not watched")
		}
	}()
}
