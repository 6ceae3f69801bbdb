// Command fastpath is the flow-offload control plane for OpenWrt routers:
// one binary for the daemon and the CLI, busybox style, to save flash.
package main

import (
	"fmt"
	"os"
)

// command is one subcommand; run returns the process exit code.
type command struct {
	name, usage, help string
	run               func(args []string) int
}

var commands []command

func init() {
	commands = []command{
		{"daemon", "daemon [--cleanup] [--root DIR] [-v]", "run the service (procd starts it); --cleanup removes fastpath's tables and exits", runDaemon},
		{"print", "print [--json] [--root DIR]", "show the plan: every decision with its reason and the nft ruleset, touching nothing", runPrint},
		{"apply", "apply [--json] [--root DIR]", "reconcile once: make the kernel match the configuration", runApply},
		{"status", "status [--json]", "what the kernel really has now, and why", runStatus},
		{"flows", "flows [--json] [--offload any|none|software|hardware] [--proto tcp|udp] [--address IP] [--limit N]", "conntrack flows with their offload state", runFlows},
		{"set", "set off|software|hardware|auto [--root DIR]", "change the offload mode (writes UCI, applies)", runSet},
		{"reload", "reload", "ask the daemon to re-read its configuration and re-plan", runReload},
		{"cut", "cut ADDRESS|PROTO:SRC:SPORT:DST:DPORT [--reason TEXT] [--force] [--local]", "cut connections in the fast path", runCut},
		{"uncut", "uncut ADDRESS|PROTO:SRC:SPORT:DST:DPORT", "release cuts", runUncut},
		{"verdict", "verdict PROTO:SRC:SPORT:DST:DPORT drop|forward [--reason TEXT]", "set one connection's verdict", runVerdict},
		{"cuts", "cuts [--json] [--offset N] [--limit N]", "the active cuts and what triggered them", runCuts},
		{"why", whyUsage, "where connections are (hardware, software, slow path, cut) and why they are not offloaded", runWhy},
		{"version", "version", "print the version", runVersion},
	}
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	name := os.Args[1]
	for _, c := range commands {
		if c.name == name {
			os.Exit(c.run(os.Args[2:]))
		}
	}
	if name == "-h" || name == "--help" || name == "help" {
		usage()
		os.Exit(0)
	}
	fmt.Fprintf(os.Stderr, "fastpath: unknown command %q\n\n", name)
	usage()
	os.Exit(2)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: fastpath COMMAND [options]")
	fmt.Fprintln(os.Stderr)
	for _, c := range commands {
		fmt.Fprintf(os.Stderr, "  fastpath %s\n      %s\n", c.usage, c.help)
	}
	fmt.Fprintln(os.Stderr, "\nRun `fastpath COMMAND -h` for a command's options.")
}
