package observe

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Route is one entry of a routing table, or the kernel's answer for one
// destination (KernelRoute).
type Route struct {
	Dst     netip.Prefix `json:"dst"`
	Gateway netip.Addr   `json:"gateway,omitempty"`
	Device  string       `json:"device"`
	Metric  uint32       `json:"metric"`
	Table   uint32       `json:"table,omitempty"` // only in the kernel's answers
}

// ParseIPv4Routes reads /proc/net/route. Addresses there are hex in host
// byte order, which is little endian on the routers and machines we target
// except big-endian MIPS; the byte order is a parameter for that reason.
func ParseIPv4Routes(data []byte, order binary.ByteOrder) ([]Route, error) {
	return parseRouteTable(data, "/proc/net/route", func(line int, f []string) (Route, bool, error) {
		if line == 1 {
			return Route{}, false, nil // header
		}
		if len(f) < 8 {
			return Route{}, false, fmt.Errorf("%d fields, want at least 8", len(f))
		}
		dst, err1 := hexAddr4(f[1], order)
		gw, err2 := hexAddr4(f[2], order)
		mask, err3 := hexAddr4(f[7], order)
		metric, err4 := strconv.ParseUint(f[6], 10, 32)
		if err := firstErr(err1, err2, err3, err4); err != nil {
			return Route{}, false, err
		}
		bits := maskBits(mask.As4())
		if bits < 0 {
			return Route{}, false, fmt.Errorf("mask %s is not contiguous", f[7])
		}
		return Route{Dst: netip.PrefixFrom(dst, bits), Gateway: gw, Device: f[0], Metric: uint32(metric)}, true, nil
	})
}

// ParseIPv6Routes reads /proc/net/ipv6_route (addresses in network order).
func ParseIPv6Routes(data []byte) ([]Route, error) {
	return parseRouteTable(data, "/proc/net/ipv6_route", func(_ int, f []string) (Route, bool, error) {
		if len(f) != 10 {
			return Route{}, false, fmt.Errorf("%d fields, want 10", len(f))
		}
		dst, err1 := hexAddr16(f[0])
		bits, err2 := strconv.ParseUint(f[1], 16, 8)
		gw, err3 := hexAddr16(f[4])
		metric, err4 := strconv.ParseUint(f[5], 16, 32)
		if err := firstErr(err1, err2, err3, err4); err != nil {
			return Route{}, false, err
		}
		if bits > 128 || f[9] == "lo" {
			return Route{}, false, nil
		}
		return Route{Dst: netip.PrefixFrom(dst, int(bits)), Gateway: gw, Device: f[9], Metric: uint32(metric)}, true, nil
	})
}

// parseRouteTable reads a /proc route table a line at a time: row turns one
// non-empty line's fields into a route (keep false: none), and its error
// is reported with file and line. An unspecified gateway (0.0.0.0, ::)
// means none.
func parseRouteTable(data []byte, file string, row func(line int, f []string) (Route, bool, error)) ([]Route, error) {
	var routes []Route
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		r, keep, err := row(line, f)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, line, err)
		}
		if !keep {
			continue
		}
		if r.Gateway.IsUnspecified() {
			r.Gateway = netip.Addr{}
		}
		routes = append(routes, r)
	}
	return routes, sc.Err()
}

// Lookup returns the route of the main table (what /proc/net/route shows)
// for addr: longest prefix, then lowest metric. It knows nothing of policy
// rules (`ip rule`) and other tables; on a live router KernelRoute asks the
// kernel, which applies them.
func Lookup(routes []Route, addr netip.Addr) (Route, bool) {
	var best Route
	found := false
	for _, r := range routes {
		if r.Dst.Addr().Is4() != addr.Is4() || !r.Dst.Contains(addr) {
			continue
		}
		if !found || r.Dst.Bits() > best.Dst.Bits() ||
			(r.Dst.Bits() == best.Dst.Bits() && r.Metric < best.Metric) {
			best, found = r, true
		}
	}
	return best, found
}

func hexAddr4(s string, order binary.ByteOrder) (netip.Addr, error) {
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("address %q is not 8 hex digits", s)
	}
	var b [4]byte
	order.PutUint32(b[:], uint32(v))
	return netip.AddrFrom4(b), nil
}

func hexAddr16(s string) (netip.Addr, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 16 {
		return netip.Addr{}, fmt.Errorf("address %q is not 32 hex digits", s)
	}
	return netip.AddrFrom16([16]byte(b)), nil
}

func maskBits(m [4]byte) int {
	v := binary.BigEndian.Uint32(m[:])
	bits := 0
	for v&0x80000000 != 0 {
		bits++
		v <<= 1
	}
	if v != 0 {
		return -1
	}
	return bits
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
