//go:build pprof

// Built only with -tags pprof (the scale benchmarks' profiling runs),
// never into the product: with FASTPATH_PROFILE=DIR set, each SIGUSR2
// starts a CPU profile, and the next one stops it and writes it to
// DIR/cpu-N.pprof beside the heap's allocations until then
// (DIR/heap-N.pprof).
package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"
)

func init() {
	dir := os.Getenv("FASTPATH_PROFILE")
	if dir == "" {
		return
	}
	runtime.MemProfileRate = 64 << 10
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR2)
	go func() {
		for n := 1; ; n++ {
			<-sig
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", n)))
			if err != nil {
				fmt.Fprintln(os.Stderr, "profile:", err)
				continue
			}
			pprof.StartCPUProfile(f)
			<-sig
			pprof.StopCPUProfile()
			f.Close()
			if h, err := os.Create(filepath.Join(dir, fmt.Sprintf("heap-%d.pprof", n))); err == nil {
				pprof.Lookup("allocs").WriteTo(h, 0)
				h.Close()
			}
		}
	}()
}
