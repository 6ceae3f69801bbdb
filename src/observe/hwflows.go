package observe

import (
	"strconv"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/platform"
	"github.com/fastpath-wrt/fastpath/src/ppe"
)

// The PPE's per-flow byte counters (has_accounting: MT7622, MT7629,
// MT7981, MT7986, MT7988; not MT7621 or MT7623) are read from Linux 6.4
// (mtk_ppe.c, mtk_foe_entry_get_mib).
var ppeCountersSince = Version{6, 4}

// PPETablesReadable tells whether the engine's tables may be read: a
// MediaTek PPE that keeps no byte counters (see HWFlows).
func PPETablesReadable(p platform.Info) bool {
	return p.HWOffloadEngine == "MediaTek PPE" && !ppeCounts(p)
}

func ppeCounts(p platform.Info) bool {
	v, _ := ParseVersion(p.Kernel)
	return p.HWFlowCounters && v.AtLeast(ppeCountersSince)
}

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
	chip := strings.ToUpper(p.SoC) + "'s PPE"
	s := ppe.Summary{Engine: p.HWOffloadEngine}
	s.Counters = ppeCounts(p)
	if s.Counters {
		s.Reason = chip + " counts the bytes of each hardware flow, and conntrack's HW_OFFLOAD flows carry them; its tables (debugfs ppeN/bind) are not read: a read clears those counters before conntrack sees them"
		return s
	}
	why := chip + " keeps no byte counters for its flows"
	if p.HWFlowCounters {
		why = chip + " counts bytes from Linux 6.4 only"
	}
	why += ": once a flow is bound in hardware, conntrack's byte counts stop, and nlbwmon and LuCI's connection list miss its traffic"
	s.Tables = ppe.ReadTables(root)
	if s.Tables == nil {
		s.Reason = "no PPE table to read (/sys/kernel/debug/ppe0/bind: debugfs not mounted, or no PPE running); " + why
		return s
	}
	s.Read = true
	s.Reason = "hardware flows in the PPE, one entry per direction:"
	for _, t := range s.Tables {
		s.Bound += t.Bound
		s.Reason += " " + t.Name + ": " + strconv.Itoa(t.Bound) + " bound (" + strconv.Itoa(t.IPv6) + " IPv6);"
		if t.Error != "" {
			s.Reason += " " + t.Error + ";"
		}
	}
	s.Reason += " " + why
	return s
}
