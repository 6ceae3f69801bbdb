//go:build linux

package engine

import "github.com/google/nftables"

// SetAfterInsert lets tests time the moment cuts are in the sets, which is
// when their frames start being dropped. f runs with the engine locked.
func SetAfterInsert(e *Engine, f func(cuts int)) {
	e.mu.Lock()
	e.afterInsert = f
	e.mu.Unlock()
}

// ReAddAfterDelete makes every element delete of Release put the element
// back right away, up to times per element, the way a frame that passed
// the lookup before the delete does in its update.
func ReAddAfterDelete(e *Engine, times int) {
	readded := map[string]int{}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.afterDelete = func(d deletedElem) {
		k := d.tuple.String()
		if readded[k] >= times {
			return
		}
		readded[k]++
		if e.nft.SetAddElements(d.set, []nftables.SetElement{{Key: d.key, Timeout: e.cfg.Expiry}}) == nil {
			_ = e.nft.Flush() // a failed re-add shows as a release that worked
		}
	}
}
