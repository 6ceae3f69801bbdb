package observe

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/platform"
	"github.com/fastpath-wrt/fastpath/src/ppe"
)

// The PPE's per-flow byte counters (has_accounting: MT7622, MT7629,
// MT7981, MT7986, MT7988; not MT7621 or MT7623) are read from Linux 6.4
// (mtk_ppe.c, mtk_foe_entry_get_mib).
var ppeCountersSince = Version{6, 4}

// HWFlows reads the flows a MediaTek PPE has bound in hardware, beside
// what conntrack's HW_OFFLOAD bit says. Where the engine counts bytes,
// conntrack carries them and the tables are left unread: each read of
// ppeN/bind takes the hardware counters (read-clear) into the driver's
// debugfs totals, and the flowtable's next stats poll, which feeds
// conntrack, no longer sees them.
func HWFlows(root string, p platform.Info) ppe.Summary {
	if p.HWOffloadEngine != "MediaTek PPE" {
		return ppe.Summary{}
	}
	chip := strings.ToUpper(p.SoC)
	s := ppe.Summary{Engine: p.HWOffloadEngine}
	v, ok := ParseVersion(p.Kernel)
	if p.HWFlowCounters && ok && v.AtLeast(ppeCountersSince) {
		s.Counters = true
		s.Reason = chip + "'s PPE counts the bytes of each hardware flow, and conntrack's HW_OFFLOAD flows carry them; its tables (debugfs ppeN/bind) are not read: a read clears those counters before conntrack sees them"
		return s
	}
	why := chip + "'s PPE keeps no byte counters for its flows"
	if p.HWFlowCounters {
		why = chip + "'s PPE counts bytes only from Linux 6.4 (this kernel: " + p.Kernel + ")"
	}
	why += ": once a flow is bound in hardware, conntrack's byte counts stop, and nlbwmon and LuCI's connection list miss its traffic"
	tables, err := ppe.ReadTables(root)
	if errors.Is(err, os.ErrNotExist) {
		s.Reason = "no PPE table to read (/sys/kernel/debug/ppe0/bind: debugfs not mounted, or no PPE running); " + why
		return s
	}
	s.Read, s.Tables = true, tables
	var parts []string
	for _, t := range tables {
		s.Bound += t.Bound
		part := t.Name + ": none bound"
		if t.Bound > 0 {
			part = t.Name + ": " + strconv.Itoa(t.Bound) + " bound (" + t.Types() + ")"
		}
		if t.Error != "" {
			part += " [" + t.Error + "]"
		}
		parts = append(parts, part)
	}
	s.Reason = "hardware flows in the PPE, one entry per direction: " + strings.Join(parts, "; ") + "; " + why
	return s
}
