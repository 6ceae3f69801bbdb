package main

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

// parseArgs parses flags wherever they stand, before, between or after the
// positional arguments (`fastpath set software --root DIR`), and returns
// the positionals in order. After "--" everything is positional.
func parseArgs(fs *flagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseNone parses a command's flags and refuses positional arguments, so
// a mistyped flag is not silently ignored.
func parseNone(fs *flagSet, args []string) error {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		fmt.Fprintf(fs.Output(), "%s takes no arguments, only flags: %q\n", fs.Name(), pos)
		fs.Usage()
		return errHelp
	}
	return nil
}

// connSyntax is how the CLI writes one connection, for help and errors.
const connSyntax = "PROTO:SRC:SPORT:DST:DPORT (e.g. udp:10.0.1.2:5000:198.51.100.7:53; IPv6 addresses in brackets: tcp:[fd00::1]:80:[fd00::2]:443)"

// parseConn reads a connection written PROTO:SRC:SPORT:DST:DPORT. An IPv6
// address holds colons of its own, so it is written in brackets, as in a
// URL: tcp:[fd00::1]:80:[fd00::2]:443. Ports and addresses are checked
// here so the error names the part; the daemon checks the rest (protocol,
// families) as it does for ubus callers.
func parseConn(s string) (cut.Tuple, error) {
	var t cut.Tuple
	bad := func(part, problem string) error {
		return fmt.Errorf("%q: %s %s; write the connection as %s", s, part, problem, connSyntax)
	}
	proto, rest, ok := strings.Cut(s, ":")
	if !ok || proto == "" {
		return t, bad("PROTO", "is missing")
	}
	t.Proto = strings.ToLower(proto)
	var err error
	if t.Src, rest, err = connAddr(rest, "SRC", bad); err != nil {
		return t, err
	}
	if t.SrcPort, rest, err = connPort(rest, "SPORT", true, bad); err != nil {
		return t, err
	}
	if t.Dst, rest, err = connAddr(rest, "DST", bad); err != nil {
		return t, err
	}
	if t.DstPort, _, err = connPort(rest, "DPORT", false, bad); err != nil {
		return t, err
	}
	return t, nil
}

// connAddr reads "ADDR:" or "[ADDR]:" from the front of s.
func connAddr(s, part string, bad func(string, string) error) (string, string, error) {
	var text, rest string
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 {
			return "", "", bad(part, "opens a bracket that does not close")
		}
		text, rest = s[1:end], s[end+1:]
		if !strings.HasPrefix(rest, ":") {
			return "", "", bad(part, "is not followed by a port")
		}
		rest = rest[1:]
	} else {
		var ok bool
		if text, rest, ok = strings.Cut(s, ":"); !ok {
			return "", "", bad(part, "is not followed by a port")
		}
	}
	a, err := netip.ParseAddr(text)
	if err != nil {
		if strings.Count(s, ":") > 4 && !strings.HasPrefix(s, "[") {
			return "", "", bad(part, "looks like an IPv6 address without brackets")
		}
		return "", "", bad(part, fmt.Sprintf("%q is not an IP address", text))
	}
	return a.Unmap().String(), rest, nil
}

// connPort reads "PORT:" (more follows) or "PORT" (the last part).
func connPort(s, part string, more bool, bad func(string, string) error) (uint16, string, error) {
	text, rest := s, ""
	if more {
		var ok bool
		if text, rest, ok = strings.Cut(s, ":"); !ok {
			return 0, "", bad(part, "is missing")
		}
	}
	n, err := strconv.ParseUint(text, 10, 16)
	if err != nil || n == 0 {
		return 0, "", bad(part, fmt.Sprintf("%q is not a port (1-65535)", text))
	}
	return uint16(n), rest, nil
}

// isAddress tells an ADDRESS (IP or CIDR) from a written connection.
func isAddress(s string) bool {
	if _, err := netip.ParseAddr(s); err == nil {
		return true
	}
	_, err := netip.ParsePrefix(s)
	return err == nil
}
