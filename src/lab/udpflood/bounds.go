package main

import (
	"fmt"
	"net/netip"
	"time"
)

// Bounds that keep a mistyped option from flooding anything but the lab for
// long: the lab's namespaces live in these prefixes (src/lab/scenarios/lib.sh).
var labPrefixes = []netip.Prefix{
	netip.MustParsePrefix("10.0.1.0/24"),
	netip.MustParsePrefix("10.0.2.0/24"),
	netip.MustParsePrefix("10.0.3.0/24"),
	netip.MustParsePrefix("fd00:1::/64"),
	netip.MustParsePrefix("fd00:2::/64"),
}

const (
	maxDuration = 120 * time.Second
	maxPPS      = 1000000
	maxFlows    = 4096
	maxSize     = 1472 // one Ethernet frame of UDP over IPv4
)

// labAddrPort parses IP:PORT (or [IPv6]:PORT) of option name and checks
// that it belongs to the lab.
func labAddrPort(name, s string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return ap, fmt.Errorf("-%s %q: want IP:PORT or [IPv6]:PORT", name, s)
	}
	if err := checkLabAddr(name, ap.Addr()); err != nil {
		return ap, err
	}
	if ap.Port() == 0 {
		return ap, fmt.Errorf("-%s %q: a fixed port, not 0", name, s)
	}
	return ap, nil
}

func labAddr(name, s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return a, fmt.Errorf("-%s %q: want an IP address", name, s)
	}
	return a, checkLabAddr(name, a)
}

func checkLabAddr(name string, a netip.Addr) error {
	a = a.Unmap()
	for _, p := range labPrefixes {
		if p.Contains(a) {
			return nil
		}
	}
	return fmt.Errorf("-%s %s: not a lab address (want one of %v)", name, a, labPrefixes)
}

// runFor is -seconds as a duration, within the bounds.
func runFor(seconds float64) (time.Duration, error) {
	d := time.Duration(seconds * float64(time.Second))
	return d, checkSeconds(d)
}

func checkSeconds(d time.Duration) error {
	if d <= 0 || d > maxDuration {
		return fmt.Errorf("-seconds %v: want more than 0 and at most %v", d.Seconds(), maxDuration.Seconds())
	}
	return nil
}
