//go:build linux

package engine

// SetAfterInsert lets tests time the moment cuts are in the sets, which is
// when their frames start being dropped. f runs with the engine locked.
func SetAfterInsert(e *Engine, f func(cuts int)) {
	e.mu.Lock()
	e.afterInsert = f
	e.mu.Unlock()
}
