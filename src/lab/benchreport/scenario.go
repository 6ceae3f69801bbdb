package benchreport

import (
	"encoding/json"
	"math"
	"sort"
)

// Spread is how far the repetitions of one figure lie apart.
type Spread struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// RelPct is (max-min)/median in percent: 0 when the median is 0.
	RelPct float64 `json:"rel_pct"`
}

// Scenario is every repetition of one named scenario on one kernel.
type Scenario struct {
	Name    string
	Kernel  string
	Medians map[string]float64
	Spread  map[string]Spread
	Runs    []Run
	Errors  []string
	Notes   []string // from note lines, which are not runs
}

// MarshalJSON puts the medians at the top level as plain numbers, as
// dist/bench.json promises (`"throughput_mbps": 2400`), beside name, kernel,
// spread, runs and errors.
func (s Scenario) MarshalJSON() ([]byte, error) {
	m := map[string]any{
		"name":   s.Name,
		"kernel": s.Kernel,
		"spread": s.Spread,
		"runs":   s.Runs,
	}
	if len(s.Errors) > 0 {
		m["errors"] = s.Errors
	}
	if len(s.Notes) > 0 {
		m["notes"] = s.Notes
	}
	for k, v := range s.Medians {
		m[k] = v
	}
	return json.Marshal(m)
}

// Aggregate groups runs by name and kernel, in the order scenarios first
// appear, and computes medians and spread over the runs without error.
func Aggregate(runs []Run) []Scenario {
	var order []string
	byKey := map[string]*Scenario{}
	for _, r := range runs {
		key := r.Name + "\x00" + r.Kernel
		s, ok := byKey[key]
		if !ok {
			s = &Scenario{Name: r.Name, Kernel: r.Kernel}
			byKey[key] = s
			order = append(order, key)
		}
		if r.Note != "" {
			s.Notes = append(s.Notes, r.Note)
			continue
		}
		s.Runs = append(s.Runs, r)
		if r.Error != "" {
			s.Errors = append(s.Errors, r.Error)
		}
	}
	out := make([]Scenario, 0, len(order))
	for _, key := range order {
		s := byKey[key]
		values := map[string][]float64{}
		for _, r := range s.Runs {
			if r.Error != "" {
				continue
			}
			for k, v := range r.Metrics {
				values[k] = append(values[k], v)
			}
		}
		s.Medians = map[string]float64{}
		s.Spread = map[string]Spread{}
		for k, vs := range values {
			med := Median(vs)
			lo, hi := minMax(vs)
			sp := Spread{Min: lo, Max: hi}
			if med != 0 {
				sp.RelPct = round(100*(hi-lo)/math.Abs(med), 1)
			}
			s.Medians[k] = med
			s.Spread[k] = sp
		}
		out = append(out, *s)
	}
	return out
}

// Median of the values (the mean of the middle two for an even count).
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	c := append([]float64(nil), vs...)
	sort.Float64s(c)
	n := len(c)
	if n%2 == 1 {
		return c[n/2]
	}
	return c[n/2-1]/2 + c[n/2]/2 // halves first: no overflow near MaxFloat64
}

func minMax(vs []float64) (float64, float64) {
	lo, hi := vs[0], vs[0]
	for _, v := range vs[1:] {
		lo = math.Min(lo, v)
		hi = math.Max(hi, v)
	}
	return lo, hi
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
