package ppe

import (
	"bufio"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// Dir is one direction of a flow as the engine keys it: the addresses and
// ports of its packets as they arrive.
type Dir struct {
	Src, Dst         netip.Addr
	SrcPort, DstPort uint16
}

// Found is the engine's entry for a flow: the state of the entry of
// either direction (BND wins), the table it is in, or why none was read.
type Found struct {
	State string `json:"state,omitempty"` // BND, UNB, FIN; "" none
	Table string `json:"table,omitempty"`
	Error string `json:"error,omitempty"`
}

// FindFlow looks for the flow's directions in every ppeN/entries table
// (all states; ppeN/bind lists only the bound ones) below root's debugfs.
func FindFlow(root string, dirs ...Dir) Found {
	var out Found
	for i := 0; i < MaxTables; i++ {
		name := "ppe" + strconv.Itoa(i)
		f, err := os.Open(root + "/sys/kernel/debug/" + name + "/entries")
		if err != nil {
			if !os.IsNotExist(err) && out.Error == "" {
				out.Error = err.Error()
			}
			continue
		}
		state := findIn(f, dirs)
		f.Close()
		if state != "" && out.State != "BND" {
			out.State, out.Table = state, name
		}
	}
	return out
}

// findIn reads one table (bounded as Parse is) for the entries whose
// orig= key is one of dirs, and returns the best state seen.
func findIn(r io.Reader, dirs []Dir) string {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), maxLine)
	best, n, size := "", 0, 0
	for sc.Scan() && n < maxLines && size < maxBytes {
		n++
		size += len(sc.Bytes()) + 1
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		for _, field := range f[2:] {
			key, ok := strings.CutPrefix(field, "orig=")
			if !ok {
				continue
			}
			if d, ok := parseKey(key); ok && matches(d, dirs) && best != "BND" {
				best = f[1]
			}
		}
	}
	return best
}

// parseKey reads SRC:SPORT->DST:DPORT (IPv6 addresses hold colons of their
// own: the port follows the last one).
func parseKey(s string) (Dir, bool) {
	from, to, ok := strings.Cut(s, "->")
	if !ok {
		return Dir{}, false
	}
	var d Dir
	var ok1, ok2 bool
	d.Src, d.SrcPort, ok1 = addrPort(from)
	d.Dst, d.DstPort, ok2 = addrPort(to)
	return d, ok1 && ok2
}

func addrPort(s string) (netip.Addr, uint16, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return netip.Addr{}, 0, false
	}
	a, err := netip.ParseAddr(strings.Trim(s[:i], "[]"))
	p, perr := strconv.ParseUint(s[i+1:], 10, 16)
	return a.Unmap(), uint16(p), err == nil && perr == nil
}

func matches(d Dir, dirs []Dir) bool {
	for _, w := range dirs {
		if d.Src == w.Src.Unmap() && d.Dst == w.Dst.Unmap() && d.SrcPort == w.SrcPort && d.DstPort == w.DstPort {
			return true
		}
	}
	return false
}
