package daemon

import (
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/nft"
)

// The reconciler's passes and status reach the kernel only through these:
// on a router nft.Backend, engine.Engine and conntrack.Client, in the state
// table tests models of the kernel that print what they hold.

// flowtableTable is our table inet fastpath.
type flowtableTable interface {
	Apply(netstate.FlowtableSpec) (nft.Result, error)
	Cleanup() error
	Read() (netstate.KernelFlowtable, error)
	AnyFlowtable() (bool, error)
}

// cutTable is the cut's netdev table.
type cutTable interface {
	Sync(devices []string, cfg cut.Config) error
	Cleanup() error
	Summary() cut.Summary
}

// flowCounter counts conntrack's entries.
type flowCounter interface {
	Total() (int, error)
	Counts() (netstate.FlowCounts, error)
}

// kernel is what a pass changes and what status reads back.
type kernel struct {
	flowtable flowtableTable
	cut       cutTable
	flows     flowCounter
}
