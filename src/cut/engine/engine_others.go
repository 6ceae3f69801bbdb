//go:build !linux

package engine

import (
	"context"
	"errors"
	"net/netip"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/logger"
	"github.com/fastpath-wrt/fastpath/src/nftevents"
)

var errNotLinux = errors.New("cut: the fast-path cut needs Linux nftables")

// Engine applies cuts; only on Linux.
type Engine struct{}

// NewEngine fails: the cut is a Linux facility.
func NewEngine(*conntrack.Client, *logger.Entry) (*Engine, error) { return nil, errNotLinux }

func (e *Engine) Sync([]string, cut.Config) error { return errNotLinux }
func (e *Engine) CutAddress(context.Context, netip.Prefix, string, string, cut.CutOptions) ([]cut.Cut, error) {
	return nil, errNotLinux
}
func (e *Engine) CutTuple(context.Context, cut.Tuple, string, string, cut.CutOptions) ([]cut.Cut, error) {
	return nil, errNotLinux
}
func (e *Engine) Release(context.Context, func(cut.Cut) bool) (int, error) { return 0, errNotLinux }
func (e *Engine) Summary() cut.Summary                                     { return cut.Summary{Reason: errNotLinux.Error()} }
func (e *Engine) WatchBlocklists(context.Context, cut.Config) error        { return errNotLinux }
func (e *Engine) Cleanup() error                                           { return errNotLinux }
func (e *Engine) Close() error                                             { return nil }
func (e *Engine) UseEvents(*nftevents.Hub)                                 {}
