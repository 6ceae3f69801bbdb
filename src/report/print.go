// Package report renders plans, statuses and flows for people (text) and
// scripts (JSON): what `fastpath print`, `status` and `flows` show.
package report

import (
	"fmt"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/nft"
	"github.com/fastpath-wrt/fastpath/src/observe"
	"github.com/fastpath-wrt/fastpath/src/plan"
	"github.com/fastpath-wrt/fastpath/src/platform"
	"github.com/fastpath-wrt/fastpath/src/ppe"
)

// Printout is `fastpath print --json`: the plan and the ruleset it implies.
type Printout struct {
	Mode      plan.Mode               `json:"mode"`
	Platform  platform.Info           `json:"platform"`
	Flowtable PlannedFlowtable        `json:"flowtable"`
	Tunnels   []plan.Tunnel           `json:"tunnels"`
	Cut       plan.Cut                `json:"cut"`
	UCIFixes  []plan.UCIFix           `json:"uci_fixes"`
	Kernel    netstate.KernelFeatures `json:"kernel"`
	HWFlows   ppe.Summary             `json:"hw_flows"`
	Decisions []plan.Decision         `json:"decisions"`
	Ruleset   string                  `json:"ruleset"`
}

// PlannedFlowtable is the flowtable a plan asks for.
type PlannedFlowtable struct {
	Table   string   `json:"table"`
	Name    string   `json:"name"`
	Enabled bool     `json:"enabled"`
	Devices []string `json:"devices"`
	Flags   []string `json:"flags"`
}

// Flags lists a spec's flowtable flags the way nft prints them.
func Flags(s netstate.FlowtableSpec) []string {
	flags := []string{}
	if s.Hardware {
		flags = append(flags, "offload")
	}
	if s.Counter {
		flags = append(flags, "counter")
	}
	return flags
}

// NewPrintout assembles the printout of a plan.
func NewPrintout(s observe.Snapshot, p plan.Plan) Printout {
	devices := p.Flowtable.Devices
	if devices == nil {
		devices = []string{}
	}
	return Printout{
		Mode:     p.Mode,
		Platform: s.Platform,
		Flowtable: PlannedFlowtable{
			Table: "inet " + nft.TableName, Name: nft.FlowtableName,
			Enabled: p.Flowtable.Enabled, Devices: devices, Flags: Flags(p.Flowtable),
		},
		Tunnels:   nonNil(p.Tunnels),
		Cut:       p.Cut,
		UCIFixes:  nonNil(p.UCIFixes),
		Kernel:    s.Kernel,
		HWFlows:   s.HWFlows,
		Decisions: p.Decisions,
		Ruleset:   Ruleset(p),
	}
}

// Ruleset is the nft text a plan applies: our flowtable table, then the
// cut's netdev table.
func Ruleset(p plan.Plan) string {
	var b strings.Builder
	if p.Flowtable.Enabled {
		b.WriteString(nft.Render(p.Flowtable))
	} else {
		fmt.Fprintf(&b, "# table inet %s: absent (offload off)\n", nft.TableName)
	}
	if p.Cut.Enabled && p.Cut.InFastpath {
		b.WriteString(cut.Render(p.Cut.Devices, p.Cut.Config))
	} else {
		b.WriteString("# table netdev fastpath_cut: absent (cut in fast path off)\n")
	}
	return b.String()
}

// Text is `fastpath print`: every decision with its reason, then the ruleset.
func (o Printout) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# board: %s", orDash(o.Platform.BoardName))
	fmt.Fprintf(&b, " (soc %s, hardware offload %s)\n", orDash(o.Platform.SoC), yesNo(o.Platform.HWOffloadCapable, "capable", "not capable"))
	fmt.Fprintf(&b, "# mode: requested %s, effective %s\n", o.Mode.Requested, orDash(o.Mode.Effective))
	if o.HWFlows.Reason != "" {
		fmt.Fprintf(&b, "# hardware: %s\n", o.HWFlows.Reason)
	}
	for _, d := range o.Decisions {
		fmt.Fprintf(&b, "# %-8s %s\n", d.Topic+":", d.Reason)
	}
	for _, f := range o.UCIFixes {
		fmt.Fprintf(&b, "# uci set %s  (%s)\n", f, f.Reason)
	}
	b.WriteString(o.Ruleset)
	return b.String()
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}
