//go:build linux

package daemon

import (
	"bytes"
	"context"
	"fmt"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/logger"

	"github.com/fastpath-wrt/fastpath/src/conntrack/cttest"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/ubus"
	"github.com/fastpath-wrt/fastpath/src/ubus/ubustest"
)

// The scale benchmarks (make bench-scale) fill a router namespace's
// conntrack table with FASTPATH_SCALE_ENTRIES entries (65,536: an Archer
// C7's nf_conntrack_max) of cttest.Mix and measure what LuCI's polling
// costs there. They are benchmarks, not tests: nothing here passes or
// fails on a figure.

func scaleEntries(b *testing.B) int {
	n := 65536
	if s := os.Getenv("FASTPATH_SCALE_ENTRIES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 0 || n > 65536 {
			b.Fatalf("FASTPATH_SCALE_ENTRIES=%q: want 0 to 65536", s)
		}
	}
	return n
}

// scaleLab is a masquerading router namespace and a UCI root for it.
func scaleLab(b testing.TB, prefix string) (*labnet.Lab, string) {
	b.Helper()
	if m := labnet.Missing(); m != "" {
		b.Skip("needs " + m)
	}
	lab, err := labnet.New(prefix, true)
	if err != nil {
		b.Fatalf("build netns lab (needs veth, netns, nf_conntrack, nft masquerade): %v", err)
	}
	b.Cleanup(lab.Close)
	root := b.TempDir()
	os.MkdirAll(filepath.Join(root, "etc/config"), 0o755)
	os.Symlink("/sys", filepath.Join(root, "sys"))
	os.Symlink("/proc", filepath.Join(root, "proc"))
	os.WriteFile(filepath.Join(root, "etc/config/firewall"), []byte("config defaults\n\toption flow_offloading '1'\n"), 0o644)
	os.WriteFile(filepath.Join(root, "etc/config/network"), []byte(
		"config interface 'lan'\n\toption device 'lan0'\n\toption proto 'static'\n\n"+
			"config interface 'wan'\n\toption device 'wan0'\n\toption proto 'static'\n"), 0o644)
	return lab, root
}

func inject(b testing.TB, ns string, n int) {
	b.Helper()
	t0 := time.Now()
	if err := labnet.In(ns, func() error { return cttest.Inject(n, cttest.Mix) }); err != nil {
		b.Fatalf("fill the router's conntrack table (needs nf_conntrack_netlink; nf_conntrack_max >= %d): %v", n, err)
	}
	b.Logf("%d conntrack entries injected in %v", n, time.Since(t0).Round(time.Millisecond))
}

// objectIn is the fastpath ubus object's handlers over a reconciler opened
// in the lab's router namespace, whose table holds n entries.
func objectIn(tb testing.TB, prefix string, n int) (map[string]ubus.Handler, *Reconciler, *labnet.Lab) {
	tb.Helper()
	lab, root := scaleLab(tb, prefix)
	inject(tb, lab.Router, n)
	log := logger.New()
	log.SetOutput(io.Discard)
	var r *Reconciler
	if err := labnet.In(lab.Router, func() (err error) {
		r, err = NewReconciler(root, log.WithField("bench", "scale"))
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(r.Close)
	if err := r.Observe(); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	obj := rpc.New(controller{New(ctx, r)}, logger.NewEntry(log))
	handlers := map[string]ubus.Handler{}
	for _, m := range obj.UbusObject().Methods {
		handlers[m.Name] = m.Handler
	}
	return handlers, r, lab
}

// allOffloaded counts a table as if every entry were offloaded: its
// Counts dumps the whole table (see status-all-offloaded-luci-polls).
type allOffloaded struct {
	ct     tableCounter
	dumper *cttest.Dumper
}

var dumps atomic.Int64

func (a allOffloaded) Total() (int, error) { return a.ct.Total() }

func (a allOffloaded) Counts() (netstate.FlowCounts, error) {
	dumps.Add(1)
	n, err := a.dumper.Entries()
	return netstate.FlowCounts{Total: n, Offloaded: n}, err
}

func (a allOffloaded) counted() int64 { return dumps.Load() }

// TestIntegrationCostFollowsTheAnswer: what status and a one-flow query
// allocate does not grow with the table (bytes are counted, not time).
// Decoding each of 3,000 entries, as a full dump does, allocates
// megabytes; the bounds leave room for the answer and nothing per entry.
func TestIntegrationCostFollowsTheAnswer(t *testing.T) {
	handlers, _, _ := objectIn(t, "fpsc", 3000)
	ctx := context.Background()
	for _, c := range []struct {
		method string
		args   ubus.Table
		bound  uint64
	}{
		{"status", nil, 128 << 10},
		{"flows", ubus.Table{{Name: "limit", Value: int32(1)}}, 64 << 10},
		{"flows", ubus.Table{{Name: "proto", Value: "udp"}, {Name: "limit", Value: int32(1)}}, 64 << 10},
	} {
		const calls = 5
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := 0; i < calls; i++ {
			if a, code := handlers[c.method](ctx, &ubus.Request{Args: c.args}); code != ubus.StatusOK {
				t.Fatalf("%s: status %d: %v", c.method, code, a)
			}
		}
		runtime.ReadMemStats(&after)
		if per := (after.TotalAlloc - before.TotalAlloc) / calls; per > c.bound {
			t.Errorf("%s %v allocates %d bytes per call at 3,000 entries, want at most %d", c.method, c.args, per, c.bound)
		}
	}
}

// BenchmarkIntegrationScale calls the ubus object's status and flows
// handlers in this process, so their wall time and allocations per call
// are Go's own figures (ns/op, B/op). The answer's encoding onto the
// socket is not in them; BenchmarkIntegrationScaleDaemon has it.
func BenchmarkIntegrationScale(b *testing.B) {
	handlers, r, lab := objectIn(b, "fpsb", scaleEntries(b))
	ctx := context.Background()
	// What status costs in conntrack where a flowtable exists (Counts:
	// on this kernel, without flowtables, no entry is offloaded).
	b.Run("conntrack-counts", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := r.ct.Counts(); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What status costs where every entry is offloaded: the kernel then
	// encodes all of them for a count. This kernel has no flowtables, so
	// a dump of the whole table stands in for the offloaded ones.
	var dumper *cttest.Dumper
	if err := labnet.In(lab.Router, func() (err error) { dumper, err = cttest.OpenDumper(); return err }); err != nil {
		b.Fatal(err)
	}
	defer dumper.Close()
	all := allOffloaded{r.ct, dumper}
	// What each status call cost before the counts were kept: one count.
	b.Run("all-offloaded-count", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := all.Counts(); err != nil {
				b.Fatal(err)
			}
		}
	})
	// status as LuCI polls it where a flowtable exists (countFlows past
	// its check for one, which this kernel fails), each call 5 s after the
	// last on the counter's clock; counts/op is how many counts ran per
	// call (most in the background: their cost is not in ns/op).
	b.Run("status-all-offloaded-luci-polls", func(b *testing.B) {
		c := newOffloadCounts(all)
		var skew time.Duration
		c.now = func() time.Time { return time.Now().Add(skew) }
		if _, err := c.Counts(); err != nil { // the daemon's first status: counted while it waits
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		counts0 := all.counted()
		for i := 0; i < b.N; i++ {
			st := r.statusUncounted(ctx)
			n, err := c.Counts()
			if err != nil || n.Offloaded == 0 {
				b.Fatalf("counts %+v: %v", n, err)
			}
			st.Flows = n
			// The 5 s to the next poll: a count started in the background
			// ends in them.
			b.StopTimer()
			for c.busy() {
				time.Sleep(time.Millisecond)
			}
			b.StartTimer()
			skew += 5 * time.Second
		}
		b.ReportMetric(float64(all.counted()-counts0)/float64(b.N), "counts/op")
	})
	for _, c := range []struct {
		name, method string
		args         ubus.Table
	}{
		{"status", "status", nil},
		{"flows-limit-100", "flows", ubus.Table{{Name: "limit", Value: int32(100)}}},
		{"flows-limit-500", "flows", ubus.Table{{Name: "limit", Value: int32(500)}}}, // LuCI's flows page
		{"flows-offloaded-limit-100", "flows", ubus.Table{{Name: "offload", Value: "any"}, {Name: "limit", Value: int32(100)}}},
		{"flows-udp-limit-100", "flows", ubus.Table{{Name: "proto", Value: "udp"}, {Name: "limit", Value: int32(100)}}},
		// A far end (76 entries), as LuCI's address field or a cut asks.
		{"flows-address-limit-100", "flows", ubus.Table{{Name: "address", Value: "198.51.100.7"}, {Name: "limit", Value: int32(100)}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if a, code := handlers[c.method](ctx, &ubus.Request{Args: c.args}); code != ubus.StatusOK {
					b.Fatalf("%s: status %d: %v", c.method, code, a)
				}
			}
		})
	}
}

// BenchmarkIntegrationScaleDaemon runs the daemon binary in the router
// namespace against the test broker, as procd and ubusd run it, and calls
// it as LuCI does. Reported per call: wall time at the caller (ns/op,
// broker and client included) and the daemon's CPU time (utime + stime
// from /proc/PID/stat, 10 ms ticks spread over b.N calls); after each
// row the daemon's VmRSS and VmHWM. idle-* is the daemon at rest before
// the table is filled. FASTPATH_BIN names a binary to measure instead of
// building this tree's.
func BenchmarkIntegrationScaleDaemon(b *testing.B) {
	n := scaleEntries(b)
	lab, root := scaleLab(b, "fpsd")
	bin := os.Getenv("FASTPATH_BIN")
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "fastpath")
		cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "../cmd/fastpath")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
	}
	sock := filepath.Join(b.TempDir(), "ubus.sock")
	broker, err := ubustest.Listen(sock)
	if err != nil {
		b.Fatal(err)
	}
	defer broker.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := exec.CommandContext(ctx, "ip", "netns", "exec", lab.Router, bin, "daemon", "--root", root, "--ubus", sock)
	d.Env = os.Environ() // the init script's GOMEMLIMIT/GOGC, when the caller sets them
	var logs bytes.Buffer
	d.Stderr = &logs
	if err := d.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cancel(); d.Wait() }()
	pid := d.Process.Pid // ip netns exec execs the command: the same process
	call := func(method string, args map[string]any) error {
		cctx, ccancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer ccancel()
		_, err := rpc.CallFastpath(cctx, sock, method, args)
		return err
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if err = call("status", nil); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the daemon does not answer status: %v\n%s", err, logs.String())
		}
	}
	time.Sleep(2 * time.Second) // at rest: its start-up garbage collected or not, as a router sees it
	idleRSS, idleHWM := memory(b, pid)
	inject(b, lab.Router, n)
	for _, c := range []struct {
		name  string
		calls []func() error
	}{
		{"status", []func() error{func() error { return call("status", nil) }}},
		{"flows-limit-100", []func() error{func() error { return call("flows", map[string]any{"limit": 100}) }}},
		// LuCI's flows page polls both every 5 s.
		{"luci-flows-page", []func() error{func() error { return call("flows", map[string]any{"limit": 500}) }, func() error { return call("cuts", nil) }}},
	} {
		b.Run(c.name, func(b *testing.B) {
			cpu0 := cpuTime(b, pid)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, f := range c.calls {
					if err := f(); err != nil {
						b.Fatalf("%v\n%s", err, logs.String())
					}
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime(b, pid)-cpu0)/float64(time.Millisecond)/float64(b.N), "daemon-cpu-ms/op")
			rss, hwm := memory(b, pid)
			b.ReportMetric(rss, "VmRSS-MB")
			b.ReportMetric(hwm, "VmHWM-MB")
			b.ReportMetric(idleRSS, "idle-VmRSS-MB")
			b.ReportMetric(idleHWM, "idle-VmHWM-MB")
		})
	}
}

// cpuTime is a process's user and system time from /proc/PID/stat.
func cpuTime(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name may hold spaces: fields count from its ')'.
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// memory is a process's VmRSS and VmHWM in MB (10^6 bytes).
func memory(b *testing.B, pid int) (rss, hwm float64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		var kb float64
		if _, err := fmt.Sscanf(line, "VmRSS: %f kB", &kb); err == nil {
			rss = kb * 1024 / 1e6
		}
		if _, err := fmt.Sscanf(line, "VmHWM: %f kB", &kb); err == nil {
			hwm = kb * 1024 / 1e6
		}
	}
	return rss, hwm
}
