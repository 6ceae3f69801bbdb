//go:build linux

package engine

import (
	"context"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/google/nftables"
)

// SetAfterInsert lets tests time the moment cuts are in the sets, which is
// when their frames start being dropped. f runs with the engine locked.
func SetAfterInsert(e *Engine, f func(cuts int)) {
	e.mu.Lock()
	e.afterInsert = f
	e.mu.Unlock()
}

// ReAddAfterRelease makes every release put the element back in its cut
// set right after the release committed, the way a frame that passed the
// lookup before the commit does in its update.
func ReAddAfterRelease(e *Engine) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.afterRelease = func(t cut.Tuple) {
		key, v6, err := cut.Key(t)
		if err != nil {
			return
		}
		set := e.set4
		if v6 {
			set = e.set6
		}
		if e.nft.SetAddElements(set, []nftables.SetElement{{Key: key, Timeout: e.cfg.Expiry}}) == nil {
			_ = e.nft.Flush() // a failed re-add shows as a release that worked
		}
	}
}

// CutTuples cuts ts as one call, each a connection of its own with no
// conntrack entry: thousands of cuts in a few transactions.
func CutTuples(e *Engine, ts []cut.Tuple, trigger string) error {
	flows := make([]netstate.Flow, len(ts))
	for i, t := range ts {
		flows[i] = netstate.Flow{Proto: t.Proto, Original: t, Reply: t.Reverse()}
	}
	_, err := e.cutFlows(context.Background(), flows, trigger, trigger, true, "dst")
	return err
}

// SetBeforeFinish makes block-list passes call f after their inserts,
// before they take the lock again for the conntrack deletes.
func SetBeforeFinish(e *Engine, f func()) {
	e.mu.Lock()
	e.beforeFinish = f
	e.mu.Unlock()
}

// SetBeforeNewCut makes the cut of a new connection of a listed address
// call f after the lists were looked at, before the lock is taken.
func SetBeforeNewCut(e *Engine, f func()) {
	e.mu.Lock()
	e.beforeNewCut = f
	e.mu.Unlock()
}
