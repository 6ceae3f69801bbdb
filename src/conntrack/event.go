package conntrack

import (
	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// Event kinds.
const (
	EventNew     = "new"
	EventDestroy = "destroy"
)

// Event is a connection conntrack created or destroyed.
type Event struct {
	Type string // EventNew or EventDestroy
	Flow netstate.Flow
}
