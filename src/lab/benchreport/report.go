package benchreport

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
)

// Report is dist/bench.json.
type Report struct {
	// Clock is the guest clock the figures were taken on (lab_run's
	// LAB_CLOCK): "instructions" or "host"; empty when not told.
	Clock     string     `json:"clock,omitempty"`
	Scenarios []Scenario `json:"scenarios"`
	Ratios    []Ratio    `json:"ratios"`
	Goals     []Goal     `json:"goals"`
}

// NewReport aggregates runs and computes the default ratios and goals.
func NewReport(runs []Run) Report {
	sc := Aggregate(runs)
	return Report{
		Scenarios: sc,
		Ratios:    Compute(sc, DefaultRatios()),
		Goals:     CheckGoals(sc, DefaultGoals()),
	}
}

// WriteJSON writes the report, indented, with a final newline.
func (r Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// clockWords say what each guest clock makes of the figures.
var clockWords = map[string]string{
	"instructions": "the guest's time counts its instructions: figures measure its work, not the host's load",
	"host":         "the guest keeps the host's time: the host's load moves the figures by several percent",
}

// leadMetrics are printed first, in this order; others follow by name.
var leadMetrics = []string{"throughput_mbps", "slowpath_packets", "router_cpu_pct", "surviving_pct"}

// WriteTable prints scenarios (median and spread of each figure), then the
// ratios and goals that could be computed.
func (r Report) WriteTable(w io.Writer) error {
	metrics := metricColumns(r.Scenarios)
	if d, ok := clockWords[r.Clock]; ok {
		fmt.Fprintf(w, "guest clock: %s (%s)\n\n", r.Clock, d)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"scenario", "kernel", "runs"}
	head = append(head, metrics...)
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, s := range r.Scenarios {
		runs := fmt.Sprint(len(s.Runs))
		if n := len(s.Notes); n > 0 {
			// Each note is a repetition measured again after a guest
			// oops; they are printed under the table.
			runs += fmt.Sprintf(" (%d retried)", n)
		}
		row := []string{s.Name, s.Kernel, runs}
		for _, m := range metrics {
			v, ok := s.Medians[m]
			if !ok {
				row = append(row, "-")
				continue
			}
			cell := formatNumber(v)
			if sp := s.Spread[m]; sp.Max != sp.Min && v != 0 {
				cell += fmt.Sprintf(" ±%.0f%%", sp.RelPct/2)
			} else if sp.Max != sp.Min {
				cell += fmt.Sprintf(" (%s..%s)", formatNumber(sp.Min), formatNumber(sp.Max))
			}
			row = append(row, cell)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Scenarios {
		for _, e := range uniq(s.Errors) {
			fmt.Fprintf(w, "  %s: %s\n", s.Name, e)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(w, "  %s: %s\n", s.Name, n)
		}
	}
	fmt.Fprintln(w)
	for _, ra := range r.Ratios {
		if ra.Value == nil {
			continue
		}
		fmt.Fprintf(w, "%-34s %6sx%s\n", ra.Label, formatRatio(*ra.Value), verdict(ra.Met, ratioGoal(ra)))
	}
	for _, g := range r.Goals {
		if g.Value == nil {
			fmt.Fprintf(w, "%-34s %7s  (not measured: no %s)\n", g.Label, "-", g.Scenario)
			continue
		}
		fmt.Fprintf(w, "%-34s %7s%s\n", g.Label, formatNumber(*g.Value), verdict(g.Met, fmt.Sprintf(">= %s", formatNumber(g.AtLeast))))
	}
	return nil
}

func ratioGoal(r Ratio) string {
	switch {
	case r.Goal != 0 && r.Max != 0:
		return fmt.Sprintf("%.2f..%.2f", r.Goal, r.Max)
	case r.Goal != 0:
		return fmt.Sprintf(">= %.2f", r.Goal)
	case r.Max != 0:
		return "<= " + formatRatio(r.Max)
	}
	return ""
}

// formatRatio prints two decimals, or two significant digits below 0.01
// (a goal of 1/100,000 is not 0.00).
func formatRatio(v float64) string {
	if v != 0 && math.Abs(v) < 0.01 {
		return fmt.Sprintf("%.2g", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func verdict(met *bool, goal string) string {
	switch {
	case met == nil:
		return ""
	case *met:
		return "  goal " + goal + ": met"
	default:
		return "  goal " + goal + ": NOT met"
	}
}

func metricColumns(scenarios []Scenario) []string {
	seen := map[string]bool{}
	for _, s := range scenarios {
		for k := range s.Medians {
			seen[k] = true
		}
	}
	var cols []string
	for _, m := range leadMetrics {
		if seen[m] {
			cols = append(cols, m)
			delete(seen, m)
		}
	}
	var rest []string
	for k := range seen {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	return append(cols, rest...)
}

func formatNumber(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.1f", v)
}

func uniq(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
