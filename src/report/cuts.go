package report

import (
	"fmt"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

// CutsText lists cuts, one line each.
func CutsText(cuts []cut.Cut) string {
	if len(cuts) == 0 {
		return "no connection cut\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-5s %-47s %-47s %10s %9s %s\n", "PROTO", "ORIGINAL", "REPLY", "FRAMES", "EXPIRES", "WHY")
	for _, c := range cuts {
		where := ""
		if !c.InFastpath {
			where = " (conntrack deletion only)"
		}
		fmt.Fprintf(&b, "%-5s %-47s %-47s %10d %8.0fs %s%s\n", c.Original.Proto,
			endpoint(c.Original.Src, c.Original.SrcPort)+" > "+endpoint(c.Original.Dst, c.Original.DstPort),
			endpoint(c.Reply.Src, c.Reply.SrcPort)+" > "+endpoint(c.Reply.Dst, c.Reply.DstPort),
			c.Frames, c.Expires, strings.TrimSpace(c.Trigger+" "+c.Reason), where)
	}
	return b.String()
}

// CutSummaryText is `fastpath cuts` for people.
func CutSummaryText(s cut.Summary) string {
	var b strings.Builder
	state := "off"
	switch {
	case s.InFastpath:
		state = "in the fast path"
	case s.Enabled:
		state = "conntrack deletion only"
	}
	fmt.Fprintf(&b, "cut         %s (%s)\n", state, s.Reason)
	fmt.Fprintf(&b, "devices     %s\n", list(s.Devices))
	b.WriteString(BackendsText(s.Backends))
	fmt.Fprintf(&b, "expiry      %.0fs after the last frame; sets hold %d connections\n", s.Expiry, s.SetSize)
	fmt.Fprintf(&b, "active      %d cuts, %d frames dropped\n", s.Active, s.FramesDropped)
	for _, l := range s.Blocklists {
		fmt.Fprintf(&b, "blocklist   %s (%s %s): %d entries\n", l.Name, l.Kind, l.Source, l.Entries)
		for _, e := range l.Errors {
			fmt.Fprintf(&b, "            %s\n", e)
		}
		b.WriteString(more("            ", l.ErrorsTotal, len(l.Errors), "problems"))
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(&b, "warning     %s\n", w)
	}
	b.WriteString(more("warning     ", s.WarningsTotal, len(s.Warnings), "warnings"))
	b.WriteString(CutsText(s.Cuts))
	return b.String()
}

// more is the line under a list an answer holds only the first of.
func more(indent string, total, shown int, what string) string {
	if total <= shown {
		return ""
	}
	return fmt.Sprintf("%s... and %d more %s (%d in all)\n", indent, total-shown, what, total)
}

// BackendsText is one line per device: where its cut frames are dropped.
func BackendsText(bs []cut.Backend) string {
	var b strings.Builder
	for _, d := range bs {
		fmt.Fprintf(&b, "cut on      %s: %s (%s)\n", d.Device, d.Backend, d.Reason)
	}
	return b.String()
}
