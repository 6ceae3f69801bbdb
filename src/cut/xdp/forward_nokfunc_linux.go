//go:build linux && mipsle

package xdp

// forwarder is never made on these CPUs (see errNoKfunc).
type forwarder struct{ spec forwardSpec }

func openForwarder() (*forwarder, error)                          { return nil, errNoKfunc }
func (f *forwarder) fdArray() []int32                             { return nil }
func (f *forwarder) add(dev string, index int32, netns int) error { return errNoKfunc }
func (f *forwarder) remove(dev string)                            {}
func (f *forwarder) counters() (ForwardCounters, error)           { return ForwardCounters{}, errNoKfunc }
func (f *forwarder) close()                                       {}
