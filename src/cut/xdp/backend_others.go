//go:build !linux || mips

package xdp

import (
	"errors"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

// errNotLinux says why this build has no XDP backend. Big-endian MIPS
// (mips_24kc: ath79's ag71xx, lantiq, realtek) is left out: none of its
// Ethernet drivers has native XDP, so the netdev cut runs there whatever
// the build holds, and the loader's code would only cost flash.
var errNotLinux = errors.New(notBuiltReason)

// Options configure a Backend.
type Options struct {
	MaxEntries int
	NetNS      int
	Veth       bool
	Forward    bool
}

// Device is where one device's cut runs and why.
type Device struct {
	Name   string `json:"name"`
	XDP    bool   `json:"xdp"`
	Reason string `json:"reason"`
}

// Backend is not available off Linux.
type Backend struct{}

func Open(Options) (*Backend, error) { return nil, errNotLinux }
func (b *Backend) Attach(dev string) Device {
	return Device{Name: dev, Reason: errNotLinux.Error()}
}
func (b *Backend) Detach(string) error              { return errNotLinux }
func (b *Backend) Devices() []Device                { return nil }
func (b *Backend) Cut([]cut.Tuple) error            { return errNotLinux }
func (b *Backend) Release([]cut.Tuple) (int, error) { return 0, errNotLinux }
func (b *Backend) Lookup(cut.Tuple) (TupleStats, bool, error) {
	return TupleStats{}, false, errNotLinux
}
func (b *Backend) Stats() ([]TupleStats, error) { return nil, errNotLinux }
func (b *Backend) Close() error                 { return nil }
func (b *Backend) Leave() error                 { return nil }
func (b *Backend) Expire(time.Duration) ([]cut.Tuple, time.Duration, error) {
	return nil, 0, errNotLinux
}
func (b *Backend) Forwarding() (bool, error)                 { return false, errNotLinux }
func (b *Backend) ForwardCounters() (ForwardCounters, error) { return ForwardCounters{}, errNotLinux }
func (b *Backend) SetDevices([]string) ([]Device, error)     { return nil, errNotLinux }

func DetachLeftovers(int) ([]string, error) { return nil, nil }
