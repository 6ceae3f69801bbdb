package cut

import (
	"bufio"
	"bytes"
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

// Bounds of one block list, so that no list can take a router's memory.
const (
	MaxListEntries  = 262144   // addresses and CIDRs kept
	MaxListBytes    = 32 << 20 // of a file read
	MaxLineBytes    = 1 << 20  // of one line
	MaxListProblems = 100      // problems reported; the rest are counted
)

// ListFile names a file block list for what its parser reports.
type ListFile struct {
	List string // the blocklist section's name
	Path string
	// Quote lets problems show a malformed line's text. Off for a file not
	// everyone may read: the report reaches whoever may read fastpath's
	// status, which must not learn a root-only file's content.
	Quote bool
}

// ParseBlocklist reads one IP or CIDR per line; '#' starts a comment,
// blank lines are skipped. A malformed or over-long line is reported as
// "path:line: reason" and skipped; every good line is kept, up to
// MaxListEntries entries and MaxListBytes bytes, beyond which the report
// names the list and the bound. err is a read error; what was read before
// it is kept.
func ParseBlocklist(r io.Reader, f ListFile) (prefixes []netip.Prefix, problems []string, err error) {
	br := bufio.NewReaderSize(io.LimitReader(r, MaxListBytes+1), 64<<10)
	seen := map[netip.Prefix]bool{}
	var rep reporter
	var buf []byte
	read := int64(0)
	for n := 1; ; n++ {
		line, size, long, rerr := readLine(br, &buf)
		read += int64(size)
		if read > MaxListBytes {
			rep.add(fmt.Sprintf("blocklist %s: %s is larger than %d bytes (MaxListBytes): lines from %d on are not read; split the list", f.List, f.Path, MaxListBytes, n))
			break
		}
		if rerr != nil && rerr != io.EOF {
			return prefixes, rep.done(f.List), fmt.Errorf("read %s: %w", f.Path, rerr)
		}
		text := string(line)
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		switch {
		case long:
			rep.add(fmt.Sprintf("%s:%d: line longer than %d bytes: skipped", f.Path, n, MaxLineBytes))
		case text == "":
		default:
			p, perr := ParsePrefix(text)
			switch {
			case perr != nil && f.Quote:
				rep.add(fmt.Sprintf("%s:%d: %q is not an IP address or CIDR: skipped", f.Path, n, text))
			case perr != nil:
				rep.add(fmt.Sprintf("%s:%d: not an IP address or CIDR: skipped (the file is not readable by everyone, so its text is not shown)", f.Path, n))
			case seen[p]:
			case len(prefixes) == MaxListEntries:
				rep.add(fmt.Sprintf("blocklist %s: more than %d entries (MaxListEntries): line %d and the entries after it are not used; split the list", f.List, MaxListEntries, n))
				return prefixes, rep.done(f.List), nil
			default:
				seen[p] = true
				prefixes = append(prefixes, p)
			}
		}
		if rerr == io.EOF {
			break
		}
	}
	return prefixes, rep.done(f.List), nil
}

// readLine reads one line into *buf and returns it without its end, and
// how many bytes it took; a line over MaxLineBytes is read to its end but
// not kept (long).
func readLine(br *bufio.Reader, buf *[]byte) (line []byte, size int, long bool, err error) {
	*buf = (*buf)[:0]
	for {
		frag, ferr := br.ReadSlice('\n')
		size += len(frag)
		if !long && len(*buf)+len(frag) > MaxLineBytes+1 {
			long, *buf = true, (*buf)[:0]
		}
		if !long {
			*buf = append(*buf, frag...)
		}
		if ferr == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(*buf, "\r\n"), size, long, ferr
	}
}

// reporter keeps the first MaxListProblems problems and counts the rest.
type reporter struct {
	problems []string
	more     int
}

func (r *reporter) add(p string) {
	if len(r.problems) < MaxListProblems {
		r.problems = append(r.problems, p)
		return
	}
	r.more++
}

func (r *reporter) done(list string) []string {
	if r.more > 0 {
		return append(r.problems, fmt.Sprintf("blocklist %s: %d more problems not listed", list, r.more))
	}
	return r.problems
}

// ParseAddresses reads a UCI list of addresses the same way, with the
// same bounds.
func ParseAddresses(list []string, name string) (prefixes []netip.Prefix, problems []string) {
	seen := map[netip.Prefix]bool{}
	var rep reporter
	for i, s := range list {
		p, err := ParsePrefix(s)
		if err != nil {
			if len(s) > 80 {
				s = s[:80] + "..."
			}
			rep.add(fmt.Sprintf("%s: address #%d %q is not an IP address or CIDR: skipped", name, i+1, s))
			continue
		}
		if seen[p] {
			continue
		}
		if len(prefixes) == MaxListEntries {
			rep.add(fmt.Sprintf("%s: more than %d entries (MaxListEntries): address #%d and those after it are not used", name, MaxListEntries, i+1))
			break
		}
		seen[p] = true
		prefixes = append(prefixes, p)
	}
	return prefixes, rep.done(name)
}
