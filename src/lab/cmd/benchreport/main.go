// Command benchreport aggregates the lab's bench repetitions into
// dist/bench.json and prints the table with medians, spread and ratios.
//
//	benchreport -o dist/bench.json [-clock instructions|host] RUNS.jsonl...
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/fastpath-wrt/fastpath/src/lab/benchreport"
)

func main() {
	out := flag.String("o", "dist/bench.json", "where to write the report")
	clock := flag.String("clock", "", "the guest clock the runs were taken on (LAB_CLOCK): instructions or host")
	flag.Parse()
	switch *clock {
	case "", "instructions", "host":
	default:
		fmt.Fprintf(os.Stderr, "benchreport: -clock %q: use instructions or host\n", *clock)
		os.Exit(2)
	}
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "benchreport: give one or more runs.jsonl files (written by src/lab/scenarios/bench.sh)")
		os.Exit(2)
	}
	var runs []benchreport.Run
	for _, path := range flag.Args() {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
			os.Exit(1)
		}
		rs, err := benchreport.ParseRuns(bytes.NewReader(b))
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchreport: %s: %v\n", path, err)
			os.Exit(1)
		}
		runs = append(runs, rs...)
	}
	report := benchreport.NewReport(runs)
	report.Clock = *clock
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf); err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
		os.Exit(1)
	}
	if err := report.WriteTable(os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("\nwritten: %s\n", *out)
}
