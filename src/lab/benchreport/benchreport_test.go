package benchreport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

const sampleRuns = `
{"name":"forward/slowpath","kernel":"6.12.1","throughput_mbps":1000,"slowpath_packets":20000,"router_cpu_pct":80}
{"name":"forward/nft-by-hand","kernel":"6.12.1","throughput_mbps":1500,"slowpath_packets":12,"router_cpu_pct":60}
{"name":"forward/fastpath","kernel":"6.12.1","throughput_mbps":1490,"slowpath_packets":13,"router_cpu_pct":61}
{"name":"forward/slowpath","kernel":"6.12.1","throughput_mbps":1100,"slowpath_packets":21000,"router_cpu_pct":82}
{"name":"forward/nft-by-hand","kernel":"6.12.1","throughput_mbps":1520,"slowpath_packets":11,"router_cpu_pct":59}
{"name":"forward/fastpath","kernel":"6.12.1","error":"no product binary"}
{"name":"forward/slowpath","kernel":"6.12.1","throughput_mbps":900,"slowpath_packets":19000,"router_cpu_pct":81}
{"name":"reload/fw4","kernel":"6.12.1","surviving_pct":100,"flows":5}
`

func TestParseRunsKeepsNamesKernelsErrorsAndMetrics(t *testing.T) {
	runs, err := ParseRuns(strings.NewReader(sampleRuns))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 8 {
		t.Fatalf("got %d runs, want 8", len(runs))
	}
	if runs[0].Name != "forward/slowpath" || runs[0].Kernel != "6.12.1" || runs[0].Metrics["slowpath_packets"] != 20000 {
		t.Errorf("first run parsed as %+v", runs[0])
	}
	if runs[5].Error != "no product binary" || len(runs[5].Metrics) != 0 {
		t.Errorf("error run parsed as %+v", runs[5])
	}
}

func TestParseRunsNamesTheBadLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{\"name\":\"a\"}\nnot json\n", "line 2"},
		{"{\"kernel\":\"k\"}\n", "missing \"name\""},
		{"{\"name\":\"a\",\"throughput_mbps\":\"fast\"}\n", `metric "throughput_mbps" must be a number`},
		{"{\"name\":7}\n", `field "name" must be a string`},
	} {
		_, err := ParseRuns(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseRuns(%q) error = %v, want it to mention %q", tc.in, err, tc.want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{5}, 5},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{10, 10, 1000}, 10},
	} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestAggregateMediansSpreadAndErrors(t *testing.T) {
	runs, err := ParseRuns(strings.NewReader(sampleRuns))
	if err != nil {
		t.Fatal(err)
	}
	sc := Aggregate(runs)
	var names []string
	for _, s := range sc {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "forward/slowpath,forward/nft-by-hand,forward/fastpath,reload/fw4" {
		t.Fatalf("scenario order %s", got)
	}
	slow := sc[0]
	if len(slow.Runs) != 3 || slow.Medians["throughput_mbps"] != 1000 {
		t.Errorf("slowpath: %d runs, median %v", len(slow.Runs), slow.Medians["throughput_mbps"])
	}
	if sp := slow.Spread["throughput_mbps"]; sp.Min != 900 || sp.Max != 1100 || sp.RelPct != 20 {
		t.Errorf("slowpath spread %+v, want 900..1100, 20%%", sp)
	}
	fp := sc[2]
	if len(fp.Runs) != 2 || len(fp.Errors) != 1 || fp.Medians["throughput_mbps"] != 1490 {
		t.Errorf("fastpath: runs %d errors %v median %v (the failed run must not count)", len(fp.Runs), fp.Errors, fp.Medians["throughput_mbps"])
	}
}

func TestRatiosAndGoals(t *testing.T) {
	runs, _ := ParseRuns(strings.NewReader(sampleRuns))
	r := NewReport(runs)
	byLabel := map[string]Ratio{}
	for _, ra := range r.Ratios {
		byLabel[ra.Label] = ra
	}
	vsSlow := byLabel["fastpath / slow path"]
	if vsSlow.Value == nil || *vsSlow.Value != 1.49 || vsSlow.Met == nil || !*vsSlow.Met {
		t.Errorf("fastpath/slow path = %+v, want 1.49 and met", vsSlow)
	}
	vsHand := byLabel["fastpath / nft by hand"]
	// 1490 / 1510 = 0.987: within 2 %.
	if vsHand.Value == nil || *vsHand.Value != 0.987 || !*vsHand.Met {
		t.Errorf("fastpath/nft by hand = %+v, want 0.987 and met", vsHand)
	}
	if ipip := byLabel["ipip fastpath / no underlay"]; ipip.Value != nil || ipip.Met != nil {
		t.Errorf("ipip ratio without ipip scenarios must stay empty, got %+v", ipip)
	}
	if g := r.Goals[0]; g.Value == nil || *g.Value != 100 || !*g.Met {
		t.Errorf("reload goal %+v", g)
	}
	// Below the goal must say so.
	runs = append(runs, Run{Name: "forward/fastpath", Kernel: "6.12.1", Metrics: map[string]float64{"throughput_mbps": 1000}},
		Run{Name: "forward/fastpath", Kernel: "6.12.1", Metrics: map[string]float64{"throughput_mbps": 1000}})
	r = NewReport(runs)
	for _, ra := range r.Ratios {
		if ra.Label == "fastpath / slow path" && (ra.Met == nil || *ra.Met) {
			t.Errorf("1000/1000 must not meet the 1.3 goal: %+v", ra)
		}
	}
}

func TestAtMostGoals(t *testing.T) {
	row := func(name string, stack, cpu float64) Run {
		return Run{Name: name, Kernel: "6.12.1", Metrics: map[string]float64{"frames_to_stack": stack, "router_cpu_pct": cpu}}
	}
	r := NewReport([]Run{row("cut/off", 100000, 40), row("cut/xdp", 0, 5)})
	var buf bytes.Buffer
	if err := r.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"cut xdp / off: frames to stack       0.00x  goal <= 1e-05: met", "cut xdp / off: router CPU            0.12x  goal <= 0.10: NOT met"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	r = NewReport([]Run{row("cut/off", 100000, 40), row("cut/xdp", 2, 4)})
	for _, ra := range r.Ratios {
		if ra.Label == "cut xdp / off: frames to stack" && (ra.Met == nil || *ra.Met) {
			t.Errorf("2 of 100,000 must not meet the 1/100,000 goal: %+v", ra)
		}
		if ra.Label == "cut xdp / off: router CPU" && (ra.Met == nil || !*ra.Met) {
			t.Errorf("4 %% against 40 %% meets 1/10: %+v", ra)
		}
	}
}

func TestBenchJSONShape(t *testing.T) {
	runs, _ := ParseRuns(strings.NewReader(sampleRuns))
	var buf bytes.Buffer
	if err := NewReport(runs).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Scenarios []map[string]any `json:"scenarios"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Scenarios[0]
	for _, k := range []string{"name", "kernel", "throughput_mbps", "slowpath_packets", "router_cpu_pct", "runs", "spread"} {
		if _, ok := s[k]; !ok {
			t.Errorf("scenario JSON lacks %q: %v", k, s)
		}
	}
	if v, ok := s["throughput_mbps"].(float64); !ok || v != 1000 {
		t.Errorf("throughput_mbps must be a plain number 1000, got %#v", s["throughput_mbps"])
	}
	if runs, ok := s["runs"].([]any); !ok || len(runs) != 3 {
		t.Errorf("runs = %#v, want 3 repetitions", s["runs"])
	}
}

func TestTablePrintsMediansRatiosAndErrors(t *testing.T) {
	runs, _ := ParseRuns(strings.NewReader(sampleRuns))
	var buf bytes.Buffer
	if err := NewReport(runs).WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"forward/slowpath", "1000 ±10%", "forward/fastpath: no product binary", "fastpath / slow path", "1.49x", "goal >= 1.30: met", "flows surviving a fw4 reload"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestTableNamesTheClock(t *testing.T) {
	runs, _ := ParseRuns(strings.NewReader(sampleRuns))
	r := NewReport(runs)
	r.Clock = "instructions"
	var buf bytes.Buffer
	if err := r.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "guest clock: instructions (") {
		t.Errorf("table does not open with the guest clock:\n%s", buf.String())
	}
	buf.Reset()
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil || m["clock"] != "instructions" {
		t.Errorf("bench.json clock = %v (err %v), want instructions", m["clock"], err)
	}
}

func FuzzParseRuns(f *testing.F) {
	f.Add([]byte(sampleRuns))
	f.Add([]byte("{\"name\":\"x\",\"a\":1e308}\n\n{}"))
	f.Add([]byte("[1,2]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		runs, err := ParseRuns(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, r := range runs {
			if r.Name == "" {
				t.Fatalf("accepted a run without a name: %q", b)
			}
		}
		var buf bytes.Buffer
		if err := NewReport(runs).WriteTable(&buf); err != nil {
			t.Fatal(err)
		}
	})
}

func TestNoteLinesAreNoRunsAndShowInTheTable(t *testing.T) {
	runs, err := ParseRuns(strings.NewReader(`
{"name":"cut/xdp","kernel":"6.12.1","frames_to_stack":10}
{"name":"cut/xdp","kernel":"6.12.1","note":"guest oops: retried once ([   76.5] Oops: int3: 0000 [#1])"}
{"name":"cut/xdp","kernel":"6.12.1","frames_to_stack":12}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := NewReport(runs)
	if len(r.Scenarios) != 1 || len(r.Scenarios[0].Runs) != 2 || r.Scenarios[0].Medians["frames_to_stack"] != 11 {
		t.Fatalf("a note counted as a run: %+v", r.Scenarios)
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 (1 retried)", "cut/xdp: guest oops: retried once ([   76.5] Oops: int3"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	j, err := json.Marshal(r.Scenarios[0])
	if err != nil || !strings.Contains(string(j), `"notes":["guest oops: retried once`) {
		t.Errorf("bench.json scenario = %s (%v), want its notes", j, err)
	}
}
