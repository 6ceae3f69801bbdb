// Package rpc is the fastpath ubus object: its methods with typed
// arguments, the validation of those arguments, and the events it sends.
package rpc

import (
	"context"
	"errors"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/platform"
	"github.com/fastpath-wrt/fastpath/src/status"
)

// Controller is what the object asks; the daemon implements it.
type Controller interface {
	Status(ctx context.Context) (status.Status, error)
	Capabilities(ctx context.Context) (Capabilities, error)
	// Flows returns at most q.Limit of the flows passing q's filters
	// (FlowQuery.Match) and how many pass them in all ("total").
	Flows(ctx context.Context, q FlowQuery) (flows []netstate.Flow, total int, err error)
	// SetMode and Reload re-plan; a change of the effective mode is
	// announced by the controller (Object.Event(EventMode, ...)), once,
	// from the pass that made it.
	SetMode(ctx context.Context, mode string) (status.Status, error) // off|software|hardware|auto
	Reload(ctx context.Context) (status.Status, error)
	Cut(ctx context.Context, r CutRequest) ([]cut.Cut, error)
	Uncut(ctx context.Context, r CutRequest) (int, error) // released count
	// Verdict drop cuts (cuts), forward releases (released count).
	Verdict(ctx context.Context, r VerdictRequest) (cuts []cut.Cut, released int, err error)
	Cuts(ctx context.Context) (cut.Summary, error)
}

// Capabilities is what the router can offload: the platform, the kernel's
// features and the modes that follow from both.
type Capabilities struct {
	Platform platform.Info           `json:"platform"`
	Kernel   netstate.KernelFeatures `json:"kernel"`
	Modes    []string                `json:"modes"` // e.g. ["off", "software"]; "hardware" only where the chipset and kernel can
}

// FlowQuery filters `flows`. Empty fields match everything.
type FlowQuery struct {
	Offload string // "", "any" (offloaded either way), "software", "hardware", "none"
	Proto   string // "", "tcp", "udp", "icmp", "icmpv6"
	Address string // IP or CIDR matching either end of either direction
	Limit   int    // 1..MaxFlowLimit; DefaultFlowLimit when not given
}

// Flow limits of the `flows` method.
const (
	DefaultFlowLimit = 100
	MaxFlowLimit     = 10000
)

// Page limits of the `cuts` method.
const (
	DefaultCutLimit = 500
	MaxCutLimit     = 10000
)

// CutRequest names connections to cut or release: an address (IP or CIDR,
// every connection with that end) or one 5-tuple.
type CutRequest struct {
	Address string
	Tuple   cut.Tuple // when Address is empty
	Reason  string
	Trigger string         // set by the object: "ubus"
	Options cut.CutOptions // force: a prefix shorter than cut_min_prefix4/6; local: the router's own connections
}

// VerdictRequest is an inspector's decision about one connection.
type VerdictRequest struct {
	Tuple   cut.Tuple
	Verdict cut.Verdict
	Reason  string
	Trigger string // set by the object: "ubus"
}

// ErrNotSupported marks a controller error caused by a missing kernel
// feature; wrap it (fmt.Errorf("...: %w", rpc.ErrNotSupported)) and the
// caller gets ubus status NOT_SUPPORTED with the text.
var ErrNotSupported = errors.New("not supported by this kernel")

// ArgumentError is a bad argument: the answer is INVALID_ARGUMENT with
// {"error": "<field>: <problem> — <fix>"}. Controllers may return it too.
type ArgumentError struct {
	Field, Problem, Fix string
}

func (e *ArgumentError) Error() string {
	return e.Field + ": " + e.Problem + " — " + e.Fix
}
