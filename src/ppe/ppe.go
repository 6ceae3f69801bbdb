// Package ppe reads the tables of MediaTek's flow-offload engine (the PPE)
// that the mtk_eth_soc driver shows in debugfs, and counts the flows bound
// in hardware: the proof that hardware offload really forwards.
package ppe

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
)

// Bounds on what a table may cost. A PPE has 8192 entries
// (MTK_PPE_ENTRIES in drivers/net/ethernet/mediatek/mtk_ppe.h) and a line
// of ppeN/bind is under 250 bytes; MT7988 has three PPEs.
const (
	MaxTables = 4
	maxLines  = 16384
	maxBytes  = 4 << 20
	maxLine   = 1024
)

// Table is what one ppeN/bind file showed.
type Table struct {
	Name  string `json:"name"`  // "ppe0"
	Bound int    `json:"bound"` // entries in state BND
	IPv6  int    `json:"ipv6"`  // of them IPv6 flows (types "IPv6 5T", "IPv6 3T", "6RD")
	// Counted: the lines carry packets=/bytes= (Linux 6.4 and newer).
	Counted bool   `json:"counted"`
	Bytes   uint64 `json:"bytes,omitempty"`
	Error   string `json:"error,omitempty"` // the first line that did not parse, or a bound hit
}

// Summary is the engine's tables and what they mean for people.
type Summary struct {
	Engine string  `json:"engine,omitempty"` // "MediaTek PPE"; empty: no engine with such tables
	Read   bool    `json:"read"`             // the tables were read
	Tables []Table `json:"tables,omitempty"`
	Bound  int     `json:"bound"` // all tables; one entry per direction of a flow
	// Counters: the SoC's hardware flows carry byte counters, so
	// conntrack (and nlbwmon, LuCI's connection list) sees their traffic.
	Counters bool   `json:"counters"`
	Reason   string `json:"reason,omitempty"` // one sentence
}

// ReadTables reads ppe0/bind ... below debugfs (root's sys/kernel/debug);
// none when there is no table at all.
func ReadTables(root string) []Table {
	var tables []Table
	for i := 0; i < MaxTables; i++ {
		name := "ppe" + strconv.Itoa(i)
		f, err := os.Open(root + "/sys/kernel/debug/" + name + "/bind")
		if err != nil {
			if !os.IsNotExist(err) {
				tables = append(tables, Table{Name: name, Error: err.Error()})
			}
			continue
		}
		tables = append(tables, Parse(name, f))
		f.Close()
	}
	return tables
}

// Parse reads one table in the driver's format (mtk_ppe_debugfs_foe_show):
//
//	00a1c BND IPv4 5T orig=10.0.1.2:50000->198.51.100.7:443 new=... eth=...->... etype=0800 vlan=0,0 ib1=... ib2=... packets=0 bytes=0
//
// index (5 hex digits), state (BND, UNB, FIN), packet type (may hold a
// space), then key=value fields; MediaTek's SDK adds " ppe=N". At most
// maxLines lines and maxBytes bytes are read.
func Parse(name string, r io.Reader) Table {
	t := Table{Name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), maxLine)
	n, size := 0, 0
	for sc.Scan() {
		n++
		size += len(sc.Bytes()) + 1
		if n > maxLines || size > maxBytes {
			t.fail(n, "more lines or bytes than a PPE holds: the rest is not counted")
			return t
		}
		if why := t.add(sc.Text()); why != "" {
			t.fail(n, why)
		}
	}
	if sc.Err() != nil {
		t.fail(n+1, sc.Err().Error()+": the rest is not counted")
	}
	return t
}

func (t *Table) fail(line int, why string) {
	if t.Error == "" {
		t.Error = t.Name + "/bind line " + strconv.Itoa(line) + ": " + why
	}
}

// add counts one line; it returns why a line does not parse.
func (t *Table) add(line string) string {
	f := strings.Fields(line)
	if len(f) == 0 {
		return ""
	}
	if _, err := strconv.ParseUint(f[0], 16, 32); err != nil || len(f) < 3 {
		return "not an entry (index, state, type, fields)"
	}
	if f[1] != "BND" {
		return "" // UNB and FIN entries forward nothing in hardware
	}
	t.Bound++
	if f[2] == "IPv6" || f[2] == "6RD" {
		t.IPv6++
	}
	for _, field := range f[3:] {
		if v, ok := strings.CutPrefix(field, "bytes="); ok {
			b, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return "bytes= is not a number"
			}
			t.Bytes += b
			t.Counted = true
		}
	}
	return ""
}
