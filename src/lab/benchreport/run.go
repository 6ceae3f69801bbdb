// Package benchreport turns the lab's bench repetitions (one JSON object per
// line, written inside the VM) into dist/bench.json: per scenario the median
// and spread of every measured figure, the repetitions themselves, and the
// ratios between scenarios that the project publishes.
package benchreport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// Run is one repetition of one scenario as the VM recorded it.
type Run struct {
	Name   string
	Kernel string
	Error  string // set when the scenario could not run
	// Note, set on a line that is no repetition but says something about
	// the row: "guest oops: retried once (...)" when a repetition was cut
	// short by the guest kernel's oops and measured again.
	Note    string
	Metrics map[string]float64 // throughput_mbps, slowpath_packets, ...
}

// MarshalJSON writes a run flat, the way the VM wrote it.
func (r Run) MarshalJSON() ([]byte, error) {
	m := map[string]any{"name": r.Name, "kernel": r.Kernel}
	if r.Error != "" {
		m["error"] = r.Error
	}
	if r.Note != "" {
		m["note"] = r.Note
	}
	for k, v := range r.Metrics {
		m[k] = v
	}
	return json.Marshal(m)
}

// ParseRuns reads JSON lines; blank lines are skipped. Every other line must
// be an object with a string "name"; numbers become metrics.
func ParseRuns(r io.Reader) ([]Run, error) {
	var runs []Run
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		run, err := parseRun(text)
		if err != nil {
			return nil, fmt.Errorf("runs line %d: %w", line, err)
		}
		runs = append(runs, run)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("runs line %d: %w", line+1, err)
	}
	return runs, nil
}

func parseRun(text []byte) (Run, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(text, &fields); err != nil {
		return Run{}, fmt.Errorf("not a JSON object (%v): each line must be {\"name\": ..., \"kernel\": ..., <metric>: <number>...}", err)
	}
	run := Run{Metrics: map[string]float64{}}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		raw := fields[k]
		switch k {
		case "name", "kernel", "error", "note":
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return Run{}, fmt.Errorf("field %q must be a string", k)
			}
			switch k {
			case "name":
				run.Name = s
			case "kernel":
				run.Kernel = s
			case "note":
				run.Note = s
			default:
				run.Error = s
			}
		default:
			var v float64
			if err := json.Unmarshal(raw, &v); err != nil {
				return Run{}, fmt.Errorf("metric %q must be a number, got %s", k, raw)
			}
			run.Metrics[k] = v
		}
	}
	if run.Name == "" {
		return Run{}, fmt.Errorf("missing \"name\"")
	}
	return run, nil
}
