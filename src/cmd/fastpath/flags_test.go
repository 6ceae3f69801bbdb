package main

import (
	"flag"
	"fmt"
	"strings"
	"testing"
)

// The CLI's flagSet answers every input as the standard flag package does:
// values, remaining arguments, errors and the usage text it prints.
func TestFlagSetMatchesStandardFlag(t *testing.T) {
	inputs := [][]string{
		{}, {"status"}, {"-v"}, {"--v"}, {"-v=false", "x"}, {"-v=maybe"}, {"-json", "-root", "/tmp", "a", "-v"},
		{"--root=/x", "--", "-v"}, {"-limit", "12"}, {"-limit=0x10"}, {"-limit", "twelve"}, {"-limit", "99999999999999999999"},
		{"-limit"}, {"-nosuch"}, {"-h"}, {"--help"}, {"---x"}, {"-=x"}, {"-"}, {"--"}, {"-reason", ""}, {"-reason", "-v"},
		{"-root", "a b", "-reason=x=y"},
	}
	for _, in := range inputs {
		var outStd, outOurs strings.Builder
		std := flag.NewFlagSet("fastpath test", flag.ContinueOnError)
		std.SetOutput(&outStd)
		ours := newFlagSet("fastpath test")
		ours.output = &outOurs
		var sRoot, sReason, oRoot, oReason string
		var sV, sJSON, oV, oJSON bool
		var sLimit, oLimit int
		std.StringVar(&sRoot, "root", "/", "read every file below `DIR`")
		ours.StringVar(&oRoot, "root", "/", "read every file below `DIR`")
		std.StringVar(&sReason, "reason", "", "why, for the log")
		ours.StringVar(&oReason, "reason", "", "why, for the log")
		std.BoolVar(&sV, "v", false, "debug logging")
		ours.BoolVar(&oV, "v", false, "debug logging")
		std.BoolVar(&sJSON, "json", false, "JSON output\nfor scripts")
		ours.BoolVar(&oJSON, "json", false, "JSON output\nfor scripts")
		std.IntVar(&sLimit, "limit", 100, "at most `N` flows")
		ours.IntVar(&oLimit, "limit", 100, "at most `N` flows")
		sOffset, oOffset := std.Int("offset", 0, "from the Nth on"), ours.Int("offset", 0, "from the Nth on")
		sTag, oTag := std.String("tag", "x", "a tag"), ours.String("tag", "x", "a tag")
		errStd, errOurs := std.Parse(in), ours.Parse(in)
		// After an error the CLI exits: the values then do not matter (the
		// flag package sets an int it could not parse to 0 or its limit).
		want := fmt.Sprintf("err=%v args=%q out=%q", errStd, std.Args(), outStd.String())
		got := fmt.Sprintf("err=%v args=%q out=%q", errOurs, ours.Args(), outOurs.String())
		if errStd == nil {
			want += fmt.Sprintf(" root=%q reason=%q v=%v json=%v limit=%d offset=%d tag=%q", sRoot, sReason, sV, sJSON, sLimit, *sOffset, *sTag)
			got += fmt.Sprintf(" root=%q reason=%q v=%v json=%v limit=%d offset=%d tag=%q", oRoot, oReason, oV, oJSON, oLimit, *oOffset, *oTag)
		}
		if got != want {
			t.Errorf("%q:\n got %s\nwant %s", in, got, want)
		}
		if (errStd == flag.ErrHelp) != (errOurs == errHelp) {
			t.Errorf("%q: help errors differ: %v, %v", in, errStd, errOurs)
		}
	}
}
