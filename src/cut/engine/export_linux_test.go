//go:build linux

package engine

import (
	"github.com/fastpath-wrt/fastpath/src/cut"
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
