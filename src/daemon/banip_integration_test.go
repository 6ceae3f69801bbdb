//go:build linux

package daemon

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/nftables"
	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/conntrack/cttest"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/ubus/ubustest"
)

// BenchmarkIntegrationBanIPLoad (make bench-scale, as root, once: it
// takes about three minutes) runs the daemon binary in a router
// namespace whose conntrack table holds FASTPATH_SCALE_ENTRIES entries
// of cttest.Mix (65,536), watching banIP's 13 sets, and then does what
// banIP does: one `nft -f` creates table inet banIP with its 13
// `flags interval; auto-merge` sets of 138,155 elements (banIP README's
// sizes), and later its reload deletes and re-creates every set under the
// same name in one transaction. Some far ends of the established entries
// are in the lists (a few hundred entries), more after the reload.
//
// Reported per phase: the daemon's CPU time (utime + stime from
// /proc/PID/stat) from just before `nft -f` until it is idle again; the
// time from `nft -f`'s return until the last listed entry's conntrack
// destroy event (the daemon deletes an entry once its tuples are in the
// cut sets); its peak RSS (VmHWM, reset before the phase through
// clear_refs); its VmRSS 60 s after the phase began to settle, and when
// it first came under 24 MB. After each phase every listed entry must be
// gone from conntrack and in the cut sets, and no other entry cut:
// otherwise the benchmark fails (timings never do).
//
// The daemon runs with GOMEMLIMIT=24MiB, what the init script sets on a
// 128 MB router (FASTPATH_GOMEMLIMIT overrides it; "off" runs without).
func BenchmarkIntegrationBanIPLoad(b *testing.B) {
	n := scaleEntries(b)
	lab, root := scaleLab(b, "fpbi")
	lists := banIPLists()
	var conf strings.Builder
	conf.WriteString("config fastpath 'main'\n\toption enabled '1'\n")
	for _, l := range lists {
		fmt.Fprintf(&conf, "\nconfig blocklist\n\toption name '%s'\n\toption type 'nftset'\n\toption family 'inet'\n\toption table 'banIP'\n\toption set '%s'\n", l.name, l.name)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/config/fastpath"), []byte(conf.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	// FASTPATH_PROFILE=DIR: a binary built with -tags pprof writes a CPU
	// and an allocation profile of each phase there, and its -v log.
	profile := os.Getenv("FASTPATH_PROFILE")
	bin := daemonBinary(b, profile != "")

	sock := filepath.Join(b.TempDir(), "ubus.sock")
	broker, err := ubustest.Listen(sock)
	if err != nil {
		b.Fatal(err)
	}
	defer broker.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	args := []string{"netns", "exec", lab.Router, bin, "daemon", "--root", root, "--ubus", sock}
	if profile != "" {
		args = append(args, "-v")
	}
	d := exec.CommandContext(ctx, "ip", args...)
	d.Env = os.Environ()
	limit := os.Getenv("FASTPATH_GOMEMLIMIT")
	switch limit {
	case "":
		limit = "24MiB"
		fallthrough
	default:
		d.Env = append(d.Env, "GOMEMLIMIT="+limit)
	case "off":
	}
	var logs lockedLog
	d.Stderr = &logs
	if err := d.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cancel(); d.Wait() }()
	if profile != "" {
		defer func() { os.WriteFile(filepath.Join(profile, "daemon.log"), []byte(logs.String()), 0o644) }()
	}
	pid := d.Process.Pid
	toggleProfile := func() {
		if profile != "" {
			d.Process.Signal(syscall.SIGUSR2)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := rpc.CallFastpath(cctx, sock, "status", nil)
		ccancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the daemon does not answer status: %v\n%s", err, logs.String())
		}
	}

	// The destroy events of the router's conntrack table, read from before
	// anything is listed: when each listed entry went.
	var ct *conntrack.Client
	var sub *conntrack.Subscription
	var nsFd int
	if err := labnet.In(lab.Router, func() (err error) {
		if ct, err = conntrack.Open(); err != nil {
			return err
		}
		if sub, err = ct.Subscribe(); err != nil {
			return err
		}
		nsFd, err = unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	defer ct.Close()
	defer unix.Close(nsFd)
	gone := &goneLog{at: map[ctKey]time.Time{}}
	go sub.Run(ctx, func(ev conntrack.Event) {
		if ev.Type == conntrack.EventDestroy {
			if k, ok := keyOfTuple(ev.Flow.Original); ok {
				gone.note(k)
			}
		}
	})

	inject(b, lab.Router, n)
	b.Logf("daemon: GOMEMLIMIT %s; %d blocklist sections; before the load: VmRSS %.1f MB, daemon CPU %v", limit, len(lists), rss(b, pid), cpuTime(b, pid))
	waitIdle(b, pid) // the new-entry events of the injection

	phase := func(name, script string, listedNow, listedBefore map[netip.Addr]bool) {
		listed := listedEntries(n, listedNow, listedBefore)
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
			b.Fatalf("reset VmHWM: %v", err)
		}
		lost0 := strings.Count(logs.String(), "notifications were lost")
		toggleProfile()
		cpu0 := cpuTime(b, pid)
		t0 := time.Now()
		fmt.Fprintf(&logs, "--- %s: nft -f begins\n", name)
		if err := lab.Nft(lab.Router, script); err != nil {
			b.Fatal(err)
		}
		end := time.Now()
		fmt.Fprintf(&logs, "--- %s: nft -f returned\n", name)
		var last time.Time
		cutAll := true
		for deadline := end.Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			var missing int
			if last, missing = gone.last(listed); missing == 0 {
				break
			}
			if time.Now().After(deadline) {
				// Reported, and the rest still measured.
				b.Errorf("%s: %d of %d listed entries still not cut 60 s after the load's end", name, missing, len(listed))
				cutAll, last = false, time.Time{}
				break
			}
		}
		cpuIdle, idleAt := waitIdle(b, pid)
		toggleProfile()
		cpu := cpuIdle - cpu0
		hwm := hwm(b, pid)
		// The kernel drops notifications the daemon's socket cannot
		// hold (the nftables monitor logs it); the daemon then reads every
		// watched set again. A subscriber that falls behind the socket is
		// dropped alone, and that is not logged.
		lost := "no"
		if strings.Count(logs.String(), "notifications were lost") > lost0 {
			lost = "yes"
		}
		if cutAll {
			checkCut(b, ct, nsFd, listed, n, name)
		}
		under, rss60 := time.Duration(-1), 0.0
		var trace []string
		for t := time.Now(); ; time.Sleep(time.Second) {
			r := rss(b, pid)
			trace = append(trace, fmt.Sprintf("%.1f", r))
			if under < 0 && r < 24 {
				under = time.Since(idleAt)
			}
			if time.Since(t) >= 60*time.Second {
				rss60 = r
				break
			}
		}
		b.Logf("%s: VmRSS each second after idle (MB): %s", name, strings.Join(trace, " "))
		underText := "never in 60 s"
		if under >= 0 {
			underText = under.Round(time.Second).String() + " after idle"
		}
		cutText := last.Sub(end).Round(time.Millisecond).String()
		if !cutAll {
			cutText = "not all within 60 s"
		}
		b.Logf("%s: nft -f %v; %d listed entries cut %s after it returned; daemon CPU %v (idle %v after nft returned); VmHWM %.1f MB; VmRSS %.1f MB 60 s after idle, under 24 MB: %s; socket overflowed (ENOBUFS): %s",
			name, end.Sub(t0).Round(time.Millisecond), len(listed), cutText, cpu, idleAt.Sub(end).Round(time.Millisecond), hwm, rss60, underText, lost)
		b.ReportMetric(float64(cpu)/float64(time.Millisecond), name+"-cpu-ms")
		if cutAll {
			b.ReportMetric(float64(last.Sub(end))/float64(time.Millisecond), name+"-cut-ms")
		}
		b.ReportMetric(hwm, name+"-VmHWM-MB")
		b.ReportMetric(rss60, name+"-VmRSS-60s-MB")
		b.ReportMetric(float64(end.Sub(t0))/float64(time.Millisecond), name+"-nft-ms")
	}

	listed1 := banIPFarEnds(false)
	phase("load", banIPScript(lists, listed1, false), listed1, nil)
	listed2 := banIPFarEnds(true)
	phase("reload", banIPScript(lists, listed2, true), listed2, listed1)
}

// daemonBinary is FASTPATH_BIN or this tree's daemon, built (with
// profiling: with -tags pprof).
func daemonBinary(b *testing.B, profiling bool) string {
	if bin := os.Getenv("FASTPATH_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "fastpath")
	tags := ""
	if profiling {
		tags = "pprof"
	}
	cmd := exec.Command("go", "build", "-trimpath", "-tags", tags, "-o", bin, "../cmd/fastpath")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// waitIdle waits until the daemon's CPU time stays put for two seconds
// (at most two minutes) and says it and when it last moved.
func waitIdle(b *testing.B, pid int) (time.Duration, time.Time) {
	cpu, moved := cpuTime(b, pid), time.Now()
	for deadline := time.Now().Add(2 * time.Minute); time.Since(moved) < 2*time.Second; time.Sleep(50 * time.Millisecond) {
		if c := cpuTime(b, pid); c != cpu {
			cpu, moved = c, time.Now()
		}
		if time.Now().After(deadline) {
			b.Logf("the daemon was still busy two minutes on")
			break
		}
	}
	return cpu, moved
}

func rss(b *testing.B, pid int) float64 { r, _ := memory(b, pid); return r }
func hwm(b *testing.B, pid int) float64 { _, h := memory(b, pid); return h }

type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 {
		return len(p), nil
	}
	// Each write is a line of the daemon's log: when it came.
	fmt.Fprintf(&l.b, "%s ", time.Now().Format("15:04:05.000"))
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// ctKey is a connection's original tuple.
type ctKey struct {
	proto        string
	src, dst     netip.Addr
	sport, dport uint16
}

func keyOfTuple(t cut.Tuple) (ctKey, bool) {
	src, err1 := netip.ParseAddr(t.Src)
	dst, err2 := netip.ParseAddr(t.Dst)
	return ctKey{t.Proto, src, dst, t.SrcPort, t.DstPort}, err1 == nil && err2 == nil
}

// goneLog is when each connection's destroy event came.
type goneLog struct {
	mu sync.Mutex
	at map[ctKey]time.Time
}

func (g *goneLog) note(k ctKey) {
	g.mu.Lock()
	g.at[k] = time.Now()
	g.mu.Unlock()
}

// last is the latest destroy among keys and how many have none.
func (g *goneLog) last(keys map[ctKey]bool) (time.Time, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var last time.Time
	missing := 0
	for k := range keys {
		t, ok := g.at[k]
		if !ok {
			missing++
		} else if t.After(last) {
			last = t
		}
	}
	return last, missing
}

// listedEntries are the TCP and UDP entries of cttest.Mix(0..n-1) whose
// far end is in now but not in before: those a phase must cut.
func listedEntries(n int, now, before map[netip.Addr]bool) map[ctKey]bool {
	out := map[ctKey]bool{}
	for i := 0; i < n; i++ {
		e := cttest.Mix(i)
		if e.Proto != 6 && e.Proto != 17 || !now[e.Dst] || before[e.Dst] {
			continue
		}
		out[ctKey{map[uint8]string{6: "tcp", 17: "udp"}[e.Proto], e.Src, e.Dst, e.SrcPort, e.DstPort}] = true
	}
	return out
}

// checkCut fails the benchmark unless every listed entry is gone from
// conntrack and its original tuple is in the cut sets, and no entry of an
// address never listed is cut.
func checkCut(b *testing.B, ct *conntrack.Client, nsFd int, listed map[ctKey]bool, n int, phase string) {
	left := 0
	total := 0
	if _, err := ct.EachTuple(func(f netstate.Flow) bool {
		total++
		if k, ok := keyOfTuple(f.Original); ok && listed[k] {
			left++
		}
		return true
	}); err != nil {
		b.Fatal(err)
	}
	c, err := nftables.New(nftables.WithNetNSFd(nsFd))
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseLasting()
	inSet := map[ctKey]bool{}
	for _, name := range []string{cut.SetName4, cut.SetName6} {
		set, err := c.GetSetByName(&nftables.Table{Name: cut.TableName, Family: nftables.TableFamilyNetdev}, name)
		if err != nil {
			b.Fatalf("%s: set netdev %s %s: %v", phase, cut.TableName, name, err)
		}
		els, err := c.GetSetElements(set)
		if err != nil {
			b.Fatal(err)
		}
		for _, el := range els {
			if tu, err := cut.DecodeKey(el.Key); err == nil {
				if k, ok := keyOfTuple(tu); ok {
					inSet[k] = true
				}
			}
		}
	}
	notInSet := 0
	for k := range listed {
		if !inSet[k] {
			notInSet++
		}
	}
	if left > 0 || notInSet > 0 {
		b.Fatalf("%s: of %d listed entries %d are still in conntrack and %d not in the cut sets", phase, len(listed), left, notInSet)
	}
	// What the rest of the table lost: each cut entry takes one entry.
	if want := n - len(listed); phase == "load" && total < want {
		b.Fatalf("%s: conntrack holds %d entries, want at least %d: entries not listed were cut", phase, total, want)
	}
}

// banIPList is one of banIP's sets and what it holds.
type banIPList struct {
	name     string
	v6       bool
	elements []string
}

// banIPLists are banIP's 13 sets with 138,155 elements, the sizes of
// banIP's README (dns.v4 95,493, hagezi.v4 39,535, the rest small): IPv4
// sets of /32 (80 %), /24 (16 %) and /16 (4 %), IPv6 sets of /48. No two
// elements of a set overlap or touch, so auto-merge keeps every one and
// the kernel holds what was loaded; none is in the ranges cttest.Mix
// connects to.
func banIPLists() []banIPList {
	sizes := []struct {
		name string
		n    int
	}{
		{"dns.v4", 95493}, {"hagezi.v4", 39535},
		{"dns.v6", 400}, {"hagezi.v6", 400}, {"adguard.v4", 400}, {"adguard.v6", 300},
		{"adguardtrackers.v4", 300}, {"adguardtrackers.v6", 300}, {"debl.v4", 300},
		{"debl.v6", 200}, {"firehol1.v4", 200}, {"blocklist.v4", 200}, {"blocklist.v6", 127},
	}
	rng := rand.New(rand.NewSource(138155))
	var out []banIPList
	for _, s := range sizes {
		l := banIPList{name: s.name, v6: strings.HasSuffix(s.name, ".v6")}
		if l.v6 {
			seen := map[[3]uint16]bool{}
			for len(l.elements) < s.n {
				// 2a00::/12 onwards, the third group even: never touching.
				p := [3]uint16{0x2a00 + uint16(rng.Intn(16)), uint16(rng.Intn(65536)), uint16(rng.Intn(32768)) * 2}
				if !seen[p] {
					seen[p] = true
					l.elements = append(l.elements, fmt.Sprintf("%x:%x:%x::/48", p[0], p[1], p[2]))
				}
			}
		} else {
			l.elements = v4Elements(rng, s.n)
		}
		out = append(out, l)
	}
	return out
}

// v4Elements is n disjoint, non-adjacent IPv4 prefixes: a /16 only at an
// even second octet in a /16 nothing else uses, a /24 only at an even,
// non-zero third octet, a /32 only at an odd last octet below 254.
func v4Elements(rng *rand.Rand, n int) []string {
	whole := map[uint16]bool{}   // /16s taken by a /16
	parts := map[uint16]bool{}   // /16s with a /24 or /32 in them
	taken24 := map[uint32]bool{} // /24s with an element in them
	hosts := map[uint32]bool{}
	first := func() byte {
		for {
			a := byte(1 + rng.Intn(223))
			switch a {
			case 10, 100, 127, 169, 172, 192, 198, 203:
				continue
			}
			return a
		}
	}
	out := make([]string, 0, n)
	for len(out) < n {
		a, bb := first(), byte(rng.Intn(256))
		s16 := uint16(a)<<8 | uint16(bb)
		switch r := rng.Intn(100); {
		case r < 4:
			if bb%2 != 0 || whole[s16] || parts[s16] {
				continue
			}
			whole[s16] = true
			out = append(out, fmt.Sprintf("%d.%d.0.0/16", a, bb))
		case r < 20:
			c := byte(2 * (1 + rng.Intn(127)))
			s24 := uint32(s16)<<8 | uint32(c)
			if whole[s16] || taken24[s24] {
				continue
			}
			parts[s16], taken24[s24] = true, true
			out = append(out, fmt.Sprintf("%d.%d.%d.0/24", a, bb, c))
		default:
			c, dd := byte(rng.Intn(256)), byte(1+2*rng.Intn(127))
			s24 := uint32(s16)<<8 | uint32(c)
			h := s24<<8 | uint32(dd)
			if whole[s16] || hosts[h] || taken24[s24] && !hostsIn(hosts, s24) {
				continue // a /24 element there
			}
			parts[s16], taken24[s24], hosts[h] = true, true, true
			out = append(out, fmt.Sprintf("%d.%d.%d.%d", a, bb, c, dd))
		}
	}
	return out
}

// hostsIn reports whether the /24 s24 holds /32 elements (and so no /24
// element).
func hostsIn(hosts map[uint32]bool, s24 uint32) bool {
	for d := uint32(1); d < 254; d += 2 {
		if hosts[s24<<8|d] {
			return true
		}
	}
	return false
}

// banIPFarEnds are the far ends of cttest.Mix's connections the lists
// hold: at the load six IPv4 addresses (about 72 entries each) and the
// IPv6 /48 of one far end; the reload unblocks one address and lists
// three more.
func banIPFarEnds(reload bool) map[netip.Addr]bool {
	addrs := []string{"198.51.100.7", "198.51.101.8", "198.51.102.9", "198.51.100.20", "198.51.101.21", "198.51.102.22", "2001:db8:5::7"}
	if reload {
		addrs = append(addrs[1:], "198.51.100.40", "198.51.101.41", "198.51.102.42")
	}
	out := map[netip.Addr]bool{}
	for _, a := range addrs {
		out[netip.MustParseAddr(a)] = true
	}
	return out
}

// banIPScript is banIP 1.8's table: a chain that accepts established
// connections and then drops what a set lists, the sets with their
// elements, the far ends in listed spread over dns.v4, hagezi.v4 and
// dns.v6. A reload deletes the rules and every set and creates them again,
// with the same names, in the same transaction.
func banIPScript(lists []banIPList, listed map[netip.Addr]bool, reload bool) string {
	var far4, far6 []string
	for a := range listed {
		if a.Is4() {
			far4 = append(far4, a.String())
		} else {
			far6 = append(far6, netip.PrefixFrom(a, 48).Masked().String())
		}
	}
	sort.Strings(far4)
	var s strings.Builder
	if reload {
		s.WriteString("flush chain inet banIP wan-forward\n")
		for _, l := range lists {
			fmt.Fprintf(&s, "delete set inet banIP %s\n", l.name)
		}
	} else {
		s.WriteString("add table inet banIP\n")
		s.WriteString("add chain inet banIP wan-forward { type filter hook forward priority -100; policy accept; }\n")
	}
	for _, l := range lists {
		typ := "ipv4_addr"
		if l.v6 {
			typ = "ipv6_addr"
		}
		els := l.elements
		switch l.name {
		case "dns.v4":
			els = append(append([]string{}, els...), far4[:len(far4)/2]...)
		case "hagezi.v4":
			els = append(append([]string{}, els...), far4[len(far4)/2:]...)
		case "dns.v6":
			els = append(append([]string{}, els...), far6...)
		}
		fmt.Fprintf(&s, "add set inet banIP %s { type %s; flags interval; auto-merge; }\n", l.name, typ)
		for i := 0; i < len(els); i += 10000 {
			fmt.Fprintf(&s, "add element inet banIP %s { %s }\n", l.name, strings.Join(els[i:min(i+10000, len(els))], ", "))
		}
	}
	s.WriteString("add rule inet banIP wan-forward ct state established,related accept\n")
	for _, l := range lists {
		ip := "ip"
		if l.v6 {
			ip = "ip6"
		}
		fmt.Fprintf(&s, "add rule inet banIP wan-forward %s daddr @%s counter drop\n", ip, l.name)
	}
	return s.String()
}
