// Package ppe reads the tables of MediaTek's flow-offload engine (the PPE)
// that the mtk_eth_soc driver shows in debugfs, and counts the flows bound
// in hardware: the proof that hardware offload really forwards.
package ppe

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
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
	Name   string         `json:"name"`    // "ppe0"
	Bound  int            `json:"bound"`   // entries in state BND
	ByType map[string]int `json:"by_type"` // "IPv4 5T", "IPv6 5T", "DS-LITE", ...
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

// ReadTables reads ppe0/bind ... below debugfs (root's sys/kernel/debug).
// No table at all is os.ErrNotExist.
func ReadTables(root string) ([]Table, error) {
	var tables []Table
	for i := 0; i < MaxTables; i++ {
		name := "ppe" + strconv.Itoa(i)
		f, err := os.Open(filepath.Join(root, "sys/kernel/debug", name, "bind"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			tables = append(tables, Table{Name: name, Error: err.Error()})
			continue
		}
		t := Parse(name, f)
		f.Close()
		tables = append(tables, t)
	}
	if len(tables) == 0 {
		return nil, os.ErrNotExist
	}
	return tables, nil
}

// Parse reads one table in the driver's format (mtk_ppe_debugfs_foe_show):
//
//	00a1c BND IPv4 5T orig=10.0.1.2:50000->198.51.100.7:443 new=... eth=...->... etype=0800 vlan=0,0 ib1=... ib2=... packets=0 bytes=0
//
// index (5 hex digits), state (BND, UNB, FIN), packet type (may hold a
// space), then key=value fields; MediaTek's SDK adds " ppe=N". At most
// maxLines lines and maxBytes bytes are read.
func Parse(name string, r io.Reader) Table {
	t := Table{Name: name, ByType: map[string]int{}}
	sc := bufio.NewScanner(io.LimitReader(r, maxBytes+1))
	sc.Buffer(make([]byte, 0, 512), maxLine)
	n, size := 0, 0
	for sc.Scan() {
		n++
		size += len(sc.Bytes()) + 1
		if n > maxLines || size > maxBytes {
			t.fail(fmt.Sprintf("%s/bind: more than %d lines or %d bytes: the rest is not counted", name, maxLines, maxBytes))
			return t
		}
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := t.add(line); err != "" {
			t.fail(fmt.Sprintf("%s/bind line %d: %s", name, n, err))
		}
	}
	if err := sc.Err(); err != nil {
		t.fail(fmt.Sprintf("%s/bind line %d: %v (longer than %d bytes?): the rest is not counted", name, n+1, err, maxLine))
	}
	return t
}

func (t *Table) fail(msg string) {
	if t.Error == "" {
		t.Error = msg
	}
}

// add counts one line; it returns why a line does not parse.
func (t *Table) add(line string) string {
	f := strings.Fields(line)
	if len(f) < 3 {
		return "fewer than three fields"
	}
	if _, err := strconv.ParseUint(f[0], 16, 32); err != nil {
		return "index " + strconv.Quote(clip(f[0])) + " is not hexadecimal"
	}
	if f[1] != "BND" {
		return "" // UNB and FIN entries forward nothing in hardware
	}
	var kind []string
	var bytes uint64
	counted := false
	for _, field := range f[2:] {
		k, v, ok := strings.Cut(field, "=")
		if !ok {
			if len(kind) < 3 {
				kind = append(kind, field)
			}
			continue
		}
		if k == "bytes" {
			b, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return "bytes=" + strconv.Quote(clip(v)) + " is not a number"
			}
			bytes, counted = b, true
		}
	}
	t.Bound++
	t.ByType[strings.Join(kind, " ")]++
	t.Bytes += bytes
	t.Counted = t.Counted || counted
	return ""
}

func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

// Types lists a table's packet types with their counts, most first.
func (t Table) Types() string {
	type kv struct {
		k string
		n int
	}
	var kvs []kv
	for k, n := range t.ByType {
		kvs = append(kvs, kv{k, n})
	}
	sort.Slice(kvs, func(i, j int) bool {
		if kvs[i].n != kvs[j].n {
			return kvs[i].n > kvs[j].n
		}
		return kvs[i].k < kvs[j].k
	})
	parts := make([]string, len(kvs))
	for i, e := range kvs {
		parts[i] = fmt.Sprintf("%s %d", e.k, e.n)
	}
	return strings.Join(parts, ", ")
}
