//go:build !linux

package nft

import (
	"context"
	"errors"

	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/nftevents"
)

var errNotLinux = errors.New("nft: nftables exists only on Linux")

// Backend is unavailable outside Linux.
type Backend struct{}

func New() (*Backend, error)                                      { return nil, errNotLinux }
func NewInNetNS(fd int) (*Backend, error)                         { return nil, errNotLinux }
func (b *Backend) Apply(s netstate.FlowtableSpec) (Result, error) { return Result{}, errNotLinux }
func (b *Backend) ApplyWithFallback(s netstate.FlowtableSpec) (Result, error) {
	return Result{}, errNotLinux
}
func (b *Backend) Read() (netstate.KernelFlowtable, error) {
	return netstate.KernelFlowtable{}, errNotLinux
}
func (b *Backend) Cleanup() error                                  { return errNotLinux }
func (b *Backend) AnyFlowtable() (bool, error)                     { return false, errNotLinux }
func (b *Backend) Watch(ctx context.Context, changed func()) error { return errNotLinux }
func (b *Backend) UseEvents(*nftevents.Hub)                        {}
