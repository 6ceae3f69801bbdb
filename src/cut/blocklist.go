package cut

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"strings"
)

// ParsePrefix reads one block-list entry: an address (a /32 or /128) or a
// CIDR. Host bits of a CIDR are cleared.
func ParsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		if p.Addr().Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q: zones are not allowed", s)
		}
		if p.Addr().Is4In6() {
			bits := p.Bits() - 96
			if bits < 0 {
				return netip.Prefix{}, fmt.Errorf("%q: IPv4-mapped prefix shorter than /96", s)
			}
			p = netip.PrefixFrom(p.Addr().Unmap(), bits)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	if a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q: zones are not allowed", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// ParseBlocklist reads one IP or CIDR per line; '#' starts a comment,
// blank lines are skipped. Malformed lines are reported as "name:line:
// reason" and skipped; every good line is kept.
func ParseBlocklist(r io.Reader, name string) (prefixes []netip.Prefix, problems []string, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	seen := map[netip.Prefix]bool{}
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		p, perr := ParsePrefix(line)
		if perr != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: %q is not an IP address or CIDR: skipped", name, n, line))
			continue
		}
		if !seen[p] {
			seen[p] = true
			prefixes = append(prefixes, p)
		}
	}
	if err := sc.Err(); err != nil {
		return prefixes, problems, fmt.Errorf("read %s: %w", name, err)
	}
	return prefixes, problems, nil
}

// ParseAddresses reads a UCI list of addresses the same way.
func ParseAddresses(list []string, name string) (prefixes []netip.Prefix, problems []string) {
	seen := map[netip.Prefix]bool{}
	for i, s := range list {
		p, err := ParsePrefix(s)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: address #%d %q is not an IP address or CIDR: skipped", name, i+1, s))
			continue
		}
		if !seen[p] {
			seen[p] = true
			prefixes = append(prefixes, p)
		}
	}
	return prefixes, problems
}
