//go:build linux

package blocklist

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// cpuPerOp starts counting the process's CPU time (user and system, every
// thread: the garbage collector's too); the function it returns reports
// it per operation as cpu-ns/op beside Go's wall-clock ns/op. On a loaded
// machine, and under qemu-user, the time spent waiting for a core is in
// ns/op and not in cpu-ns/op. Call it after the benchmark's setup.
func cpuPerOp(b *testing.B) func() {
	t0 := processCPU(b)
	return func() { b.ReportMetric(float64(processCPU(b)-t0)/float64(b.N), "cpu-ns/op") }
}

func processCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
