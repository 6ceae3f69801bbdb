//go:build linux

// The router's day is part of make test (test-root runs every
// TestIntegration as root); make test-routers-day runs it alone, and make
// bench-day runs it alone with its latencies judged against their goals.

package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/nftables"
	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/ubus"
	"github.com/fastpath-wrt/fastpath/src/ubus/ubustest"
)

// The router's day (issue 19): one daemon, the real binary on the test
// broker, lives through a compressed day of events as a router sees them,
// and after every event the test checks what must hold on a router:
//
//   - every established connection whose far end is listed (or that a
//     `cut` call named) is cut: its tuples are in the cut set (the reply
//     tuple expires once the far end no longer hears from the client);
//   - nothing else is cut: no other tuple is in the cut set, a connection
//     that was never listed keeps its conntrack entry (same id) all day,
//     and a released one forwards again;
//   - every answer of status, cuts and flows encodes in under 1 MiB of
//     blobmsg, ubusd's limit;
//   - no watcher stays degraded;
//   - the daemon's RSS after each event and its thread count stay under
//     the bounds below.
//
// The day is a 128 MB router's: the daemon runs with the environment the
// init script gives it there (routerEnv), thousands of cuts are active at
// once (the bulk list's flows) and banIP's set holds over 100,000 elements.
//
// What must happen "eventually" (a cut, a release, a watcher's recovery)
// is polled until it holds; what does not hold after dayHang is a
// violation. Timing decides nothing else here, since make test runs on
// loaded shared machines: cut and answer latencies are measured, and make
// bench-day (FASTPATH_DAY_BENCH) judges them against their goals. The
// flowtable part of the day (the kernel's flowtable devices equal the
// plan) needs a flowtable kernel: the VM lab's t_routers_day
// (src/lab/scenarios/tests.sh).
const (
	dayHang        = 60 * time.Second // past this a check that should hold is a violation (a hang, or a change never seen); 23.6 s is the worst seen on a loaded 2-core machine (a cut after banIP's 100,000-element reload under the 24 MiB limit)
	dayGoal        = time.Second      // the goal for a cut (every one) and for answers (95th percentile): make bench-day judges it
	dayMemTotalKB  = 124000           // /proc/meminfo's MemTotal on a 128 MB router (the kernel's own memory is not in it)
	dayThreadBound = 64               // OS threads of the daemon (it reports no goroutine count)
	dayPort        = 9300             // the echoing far ends of the population
	dayFar         = "10.91.0.0/16"   // every address in it is the server's
	dayBulk        = 3000             // addresses of the bulk list, each with a live flow: cut at once
	dayCutsAtOnce  = 2000             // the day must reach at least this many active cuts at once
	dayBanIPSize   = 100000           // filler elements of banIP's interval set
	dayBurst       = 20000            // new connections per burst
)

// dayRSSOverhead is what the daemon's RSS after an event may hold beyond
// GOMEMLIMIT, which bounds only the Go heap: the binary's text and data as
// far as they are paged in, stacks and netlink buffers, and garbage the
// collector has not yet returned after a reload. Measured under the 24 MiB
// limit: 23-38 MiB after an event. The bound, 48 MiB, leaves 10 MiB above
// the worst seen because the scavenger returns freed pages later on a
// loaded machine; a leak grows past it within the day.
const dayRSSOverhead = 24 << 20

// dayPeakRSSBound is what a 128 MB router can spare the daemon at its
// peak (VmHWM): half its RAM, beside the kernel, its services, the
// conntrack table and banIP's own sets. GOMEMLIMIT is soft: re-created,
// banIP's 100,000-element set is live twice with its dump beside it, and
// on a loaded machine the collector's CPU cap lets the heap run past the
// limit (peaks of 54-74 MiB measured). make bench-day judges it; make test
// does not, since the peak follows the machine's load.
const dayPeakRSSBound = 64 << 20

// dayFlow is one connection of the population: a UDP flow from the client
// to a far end, kept alive by a send every second and echoed back.
type dayFlow struct {
	group string
	dst   netip.Addr
	sport uint16
	conn  *net.UDPConn
}

// tkey is a UDP tuple as conntrack and the cut set hold it.
type tkey struct {
	src, dst     netip.Addr
	sport, dport uint16
}

func (k tkey) String() string {
	return fmt.Sprintf("udp %s:%d -> %s:%d", k.src, k.sport, k.dst, k.dport)
}

func (f *dayFlow) orig() tkey {
	return tkey{netip.MustParseAddr(labnet.ClientV4), f.dst, f.sport, dayPort}
}

// reply is the reply tuple: the lab's router does not masquerade.
func (f *dayFlow) reply() tkey {
	return tkey{f.dst, netip.MustParseAddr(labnet.ClientV4), dayPort, f.sport}
}

// dayRow is what one event measured.
type dayRow struct {
	n          int
	name       string
	took       time.Duration // the event itself
	settle     time.Duration // until every eventual check held (or dayHang)
	cutLatency time.Duration // until every listed flow was cut; -1: no new cut expected
	maxAnswer  int           // bytes of blobmsg
	maxAnswerM string
	answerLat  []time.Duration
	cuts       int // population flows and burst connections in the cut set
	rss        int // bytes: VmRSS after the event
	hwm        int // bytes: VmHWM, the daemon's peak RSS so far
	threads    int
	violations []string
}

type day struct {
	t  *testing.T
	ld *labDaemon
	ct *conntrack.Client
	ns int // the router's netns, for nftables reads

	listDir string
	flows   []*dayFlow

	// The model: what must be cut now.
	lists      map[string]map[netip.Prefix]bool // block list -> its prefixes
	manual     map[uint16]bool                  // flows cut by a ubus cut call, by source port
	manualAddr map[netip.Addr]bool
	everCut    map[uint16]bool     // flows that had to be cut at some time
	everAddr   map[netip.Addr]bool // far ends that were listed at some time
	cleanID    map[uint16]uint32   // conntrack id of each flow never listed, when the day began
	burst      []tkey              // the last burst's connections to listed far ends, checked once
	stuck      map[string]bool     // checks that already outlived dayHang: reported, not waited for again

	memLimit string // GOMEMLIMIT as the init script sets it
	rssBound int    // bytes: memLimit + dayRSSOverhead, for VmRSS after an event

	ubusUp     bool
	mu         sync.Mutex      // callLats: calls may run at once
	looks      []time.Duration // how long one evaluation takes
	answerLats []time.Duration // every answer of the day
	callLats   []time.Duration // the events' own calls (reload, set, cut, uncut)
	rows       []dayRow
	needs      string // for the current event: what the product lacks today if its checks fail
}

// TestIntegrationRoutersDay: see the comment on dayHang.
func TestIntegrationRoutersDay(t *testing.T) {
	if os.Getenv("FASTPATH_EXPECT_FLOWTABLE") == "1" {
		// In the lab VM the day's 20,000-connection bursts are not tracked
		// with their replies under TCG (0 of 3,225 after 60 s); there the
		// flowtable's part of the day is t_routers_day.
		t.Skip("the netns day runs on the host kernel (make test-root); in the lab VM, t_routers_day")
	}
	began := time.Now()
	env, memLimit, limitBytes := routerEnv(t)
	ld := startLabDaemon(t, "fpday", "config fastpath 'main'\n\toption enabled '1'\n", env...)
	d := &day{t: t, ld: ld, listDir: t.TempDir(), memLimit: memLimit, rssBound: limitBytes + dayRSSOverhead,
		lists: map[string]map[netip.Prefix]bool{}, manual: map[uint16]bool{}, manualAddr: map[netip.Addr]bool{},
		everCut: map[uint16]bool{}, everAddr: map[netip.Addr]bool{}, cleanID: map[uint16]uint32{}, stuck: map[string]bool{}, ubusUp: true}
	d.setup()
	t.Logf("setup: %d flows, banIP set of %d elements, in %v; the daemon runs with %s (RSS bound %d MiB)", len(d.flows), dayBanIPSize+21, time.Since(began).Round(time.Millisecond), strings.Join(env, " "), d.rssBound>>20)

	local := filepath.Join(d.listDir, "local.txt")
	bulk := filepath.Join(d.listDir, "bulk.txt")
	localList := []string{"203.0.113.9", "10.91.2.1", "10.91.2.2", "10.91.5.0/24"}
	config := func(uciAddrs ...string) string {
		s := "config fastpath 'main'\n\toption enabled '1'\n\n" +
			"config blocklist\n\toption name 'local'\n\toption type 'file'\n\toption path '" + local + "'\n\n" +
			"config blocklist\n\toption name 'bulk'\n\toption type 'file'\n\toption path '" + bulk + "'\n\n" +
			"config blocklist\n\toption name 'banip'\n\toption type 'nftset'\n\toption family 'inet'\n\toption table 'banIP'\n\toption set 'drop.v4'\n\n" +
			"config blocklist\n\toption name 'uci'\n\toption type 'list'\n"
		for _, a := range uciAddrs {
			s += "\tlist address '" + a + "'\n"
		}
		return s
	}
	bulkAddrs := make([]string, dayBulk)
	for i := range bulkAddrs {
		bulkAddrs[i] = bulkAddr(i).String()
	}
	banIP := banIPElements()
	manualFlows := d.group("manual")

	type event struct {
		name  string
		needs string // what the product lacks today when this event's checks fail
		do    func()
	}
	events := []event{
		{"LuCI adds four block lists (file, file, nft set, UCI list); ubus reload", "", func() {
			d.writeList(local, localList)
			d.writeList(bulk, nil)
			d.writeConfig(config("10.91.8.1"))
			d.setList("local", localList...)
			d.setList("bulk")
			d.setList("banip", banIP...)
			d.setList("uci", "10.91.8.1")
			d.call("reload", nil)
		}},
		{"ubus reload, nothing changed", "", func() { d.call("reload", nil) }},
		{"ubus set software (LuCI's mode switch)", "", func() { d.call("set", map[string]any{"mode": "software"}) }},
		{"list file replaced by rename: 8 addresses added", "", func() {
			localList = append(localList, rangeAddrs("10.91.2.3", 8)...)
			d.renameList(local, localList)
			d.setList("local", localList...)
		}},
		{"SIGHUP (hotplug script)", "", d.hangup},
		{"fw4 reload (foreign table deleted and re-created)", "", d.fw4Reload},
		// banIP's reload: one transaction deletes its table and re-creates
		// the set under the same name (new handle), with a CIDR more and one
		// address unblocked. Needs deletions and run-time CIDRs in watched
		// sets (branch cut): today the CIDR's flows stay uncut and the
		// unblocked address stays cut.
		{"banIP reload: delete table + re-create, CIDR 10.91.3.64/26 added, 10.91.4.7 unblocked", "deletions and run-time CIDRs in watched nft sets", func() {
			banIP = append(without(banIP, "10.91.4.7"), "10.91.3.64/26")
			d.nft("delete table inet banIP\n" + banIPTable(banIP))
			d.setList("banip", banIP...)
		}},
		{"LuCI Save & Apply: UCI list gains 10.91.8.2; ubus reload", "", func() {
			d.writeConfig(config("10.91.8.1", "10.91.8.2"))
			d.setList("uci", "10.91.8.1", "10.91.8.2")
			d.call("reload", nil)
		}},
		{"ifdown lan0 (link down, 2 s)", "", func() { d.ip("link", "set", "lan0", "down"); time.Sleep(2 * time.Second) }},
		{"ifup lan0", "", func() { d.ip("link", "set", "lan0", "up") }},
		// A CIDR added at run time to a watched interval set arrives as a
		// start and an end element. Needs run-time CIDRs (branch cut).
		{"banIP adds CIDR 10.91.6.0/24 at run time (nft add element)", "run-time CIDRs in watched interval sets", func() {
			banIP = append(banIP, "10.91.6.0/24")
			d.nft("add element inet banIP drop.v4 { 10.91.6.0/24 }\n")
			d.setList("banip", banIP...)
		}},
		{fmt.Sprintf("bulk list replaced by rename: %d addresses with live flows", dayBulk), "", func() {
			d.renameList(bulk, bulkAddrs)
			d.setList("bulk", bulkAddrs...)
		}},
		{fmt.Sprintf("burst of %d new connections, 1 in 20 to the listed 10.91.5.0/24", dayBurst), "", func() { d.newBurst(50000) }},
		{fmt.Sprintf("LuCI's Cut button: %d ubus cut calls, one connection each", len(manualFlows)), "", func() {
			for _, f := range manualFlows[:len(manualFlows)-3] {
				d.call("cut", d.tupleArgs(f, "luci"))
				d.manual[f.sport] = true
			}
		}},
		{"ubus cut of an address (10.91.10.1, 3 connections)", "", func() {
			d.call("cut", map[string]any{"address": "10.91.10.1", "reason": "ids"})
			d.manualAddr[netip.MustParseAddr("10.91.10.1")] = true
		}},
		{"ubusd stops", "", func() { d.ld.broker.Close(); d.ubusUp = false }},
		{"list file replaced by rename while ubusd is away: 5 addresses added", "", func() {
			localList = append(localList, rangeAddrs("10.91.2.11", 5)...)
			d.renameList(local, localList)
			d.setList("local", localList...)
		}},
		{"SIGHUP while ubusd is away", "", d.hangup},
		{"ubusd comes back", "", d.restartBroker},
		{"fw4 reload", "", d.fw4Reload},
		{"LuCI's Uncut button: 50 ubus uncut calls", "", func() {
			for _, f := range manualFlows[:50] {
				d.call("uncut", d.tupleArgs(f, ""))
				delete(d.manual, f.sport)
			}
		}},
		{"ubus uncut of the address 10.91.10.1", "", func() {
			d.call("uncut", map[string]any{"address": "10.91.10.1"})
			delete(d.manualAddr, netip.MustParseAddr("10.91.10.1"))
		}},
		{"ifdown wan0 (link down, 2 s)", "", func() { d.ip("link", "set", "wan0", "down"); time.Sleep(2 * time.Second) }},
		{"ifup wan0 (and netifd's route back)", "", func() {
			d.ip("link", "set", "wan0", "up")
			if err := d.ld.lab.RouteToServer(dayFar); err != nil {
				d.t.Fatal(err)
			}
		}},
		// The other half of banIP's pattern: the set alone is deleted and
		// re-created in place. Needs deletions and run-time CIDRs (branch
		// cut), as above.
		{"banIP reload: delete set + re-create, CIDR 10.91.3.128/26 added, 10.91.4.9 unblocked", "deletions and run-time CIDRs in watched nft sets", func() {
			banIP = append(without(banIP, "10.91.4.9"), "10.91.3.128/26")
			d.nft("delete chain inet banIP pre\ndelete set inet banIP drop.v4\n" + banIPTable(banIP))
			d.setList("banip", banIP...)
		}},
		{"ubus set auto", "", func() { d.call("set", map[string]any{"mode": "auto"}) }},
		// An address taken off a watched file must be released. Needs
		// deletions in block lists (branch cut).
		{"list file replaced by rename: 10.91.2.2 removed", "deletions in watched block-list files", func() {
			localList = without(localList, "10.91.2.2")
			d.renameList(local, localList)
			d.setList("local", localList...)
		}},
		// Needs deletions in block lists (branch cut): today every one of
		// these flows stays cut. With them, the 3,000 releases must go in
		// bulk: answers and new cuts may not wait for them.
		{fmt.Sprintf("bulk list emptied by rename: %d releases", dayBulk), "deletions in watched block-list files, released in bulk without blocking answers or new cuts", func() {
			d.renameList(bulk, nil)
			d.setList("bulk")
		}},
		{fmt.Sprintf("burst of %d new connections", dayBurst), "", func() { d.newBurst(50001) }},
		{"ubus reload (hotplug script)", "", func() { d.call("reload", nil) }},
		{"fw4 reload", "", d.fw4Reload},
		{"50 SIGHUPs in a row (hotplug storm)", "", func() {
			for i := 0; i < 50; i++ {
				d.hangup()
			}
		}},
		{"20 ubus reload calls at once (LuCI and hotplug together)", "", func() {
			var wg sync.WaitGroup
			for i := 0; i < 20; i++ {
				wg.Add(1)
				go func() { defer wg.Done(); d.call("reload", nil) }()
			}
			wg.Wait()
		}},
		{"quiet: LuCI polls", "", func() {}},
	}

	for i, ev := range events {
		d.needs = ev.needs
		before := d.expectedCuts()
		start := time.Now()
		ev.do()
		took := time.Since(start)
		newCuts := d.burst != nil
		for sport := range d.expectedCuts() {
			newCuts = newCuts || !before[sport]
		}
		row := d.check(i+1, ev.name, took, newCuts)
		d.rows = append(d.rows, row)
	}
	d.report(time.Since(began))
}

// routerEnv is the daemon's environment on a 128 MB router: GOMEMLIMIT
// from the init script's own go_memlimit on that router's meminfo, and
// GOGC at Go's default, which the init script leaves alone (a GOGC in the
// test's environment must not leak in). It returns the limit as text and
// in bytes.
func routerEnv(t *testing.T) (env []string, limit string, bytes int) {
	t.Helper()
	meminfo := filepath.Join(t.TempDir(), "meminfo")
	if err := os.WriteFile(meminfo, []byte(fmt.Sprintf("MemTotal:       %d kB\nMemFree:        %d kB\n", dayMemTotalKB, dayMemTotalKB/2)), 0o644); err != nil {
		t.Fatal(err)
	}
	initScript, err := filepath.Abs("../../../files/fastpath.init")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-c", `. "$1" && go_memlimit "$2"`, "sh", initScript, meminfo).Output()
	if err != nil {
		t.Fatalf("go_memlimit of %s: %v", initScript, err)
	}
	limit = strings.TrimSpace(string(out))
	mib, err := strconv.Atoi(strings.TrimSuffix(limit, "MiB"))
	if err != nil || !strings.HasSuffix(limit, "MiB") {
		t.Fatalf("go_memlimit said %q; want N MiB", limit)
	}
	return []string{"GOMEMLIMIT=" + limit, "GOGC=100"}, limit, mib << 20
}

// setup routes the far range to the server, starts its echo and sinks,
// loads banIP's table, opens the population's flows, and waits until the
// router tracks every one.
func (d *day) setup() {
	t, lab := d.t, d.ld.lab
	if err := lab.RouteToServer(dayFar); err != nil {
		t.Fatal(err)
	}
	echo, err := labnet.EchoUDP(lab.Server, dayPort)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { echo.Close() })
	// The bursts' far ends: bound, never read, so no ICMP answers them.
	for p := dayPort + 1; p <= dayPort+4; p++ {
		s, err := labnet.ListenUDP(lab.Server, fmt.Sprintf("0.0.0.0:%d", p))
		if err != nil {
			t.Fatal(err)
		}
		s.SetReadBuffer(4096)
		t.Cleanup(func() { s.Close() })
	}
	d.nft(banIPTable(banIPElements()))
	d.fw4Reload()

	err = labnet.In(lab.Router, func() error {
		var err error
		d.ct, err = conntrack.Open()
		if err != nil {
			return err
		}
		d.ns, err = unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.ct.Close(); unix.Close(d.ns) })

	add := func(group string, addrs ...netip.Addr) {
		for _, a := range addrs {
			f := &dayFlow{group: group, dst: a, sport: uint16(20000 + len(d.flows))}
			d.flows = append(d.flows, f)
		}
	}
	seq := func(first string, n, step int) []netip.Addr {
		a := netip.MustParseAddr(first).As4()
		base := binary.BigEndian.Uint32(a[:])
		out := make([]netip.Addr, n)
		for i := range out {
			var b [4]byte
			binary.BigEndian.PutUint32(b[:], base+uint32(i*step))
			out[i] = netip.AddrFrom4(b)
		}
		return out
	}
	add("clean", seq("10.91.100.1", 40, 1)...)
	add("clean", netip.MustParseAddr(labnet.ServerV4))
	add("local", seq("10.91.2.1", 20, 1)...)
	add("banip", seq("10.91.4.1", 20, 2)...)   // single addresses, not adjacent: auto-merge keeps them apart
	add("banip", seq("10.91.3.1", 10, 1)...)   // in the /26 banIP holds from the start
	add("banip", seq("10.91.3.100", 10, 1)...) // in the /26 its first reload adds
	add("banip", seq("10.91.3.130", 5, 1)...)  // in the /26 its second reload adds
	add("banip", seq("10.91.6.1", 10, 1)...)   // in the /24 added at run time
	add("uci", seq("10.91.8.1", 3, 1)...)
	add("manual", seq("10.91.9.1", 103, 1)...)
	for i := 0; i < 3; i++ {
		add("manual-addr", netip.MustParseAddr("10.91.10.1"))
	}
	for i := 0; i < dayBulk; i++ {
		add("bulk", bulkAddr(i))
	}

	err = labnet.In(lab.Client, func() error {
		la := &net.UDPAddr{IP: net.ParseIP(labnet.ClientV4)}
		for _, f := range d.flows {
			la.Port = int(f.sport)
			c, err := net.DialUDP("udp", la, &net.UDPAddr{IP: f.dst.AsSlice(), Port: dayPort})
			if err != nil {
				return fmt.Errorf("flow from port %d: %w", f.sport, err)
			}
			c.SetReadBuffer(2048) // echoes are not read: keep what they queue small
			f.conn = c
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			for _, f := range d.flows {
				f.conn.Write([]byte("day"))
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
		for _, f := range d.flows {
			f.conn.Close()
		}
	})

	// Every flow tracked and answered: conntrack marks a UDP flow assured
	// once replies have come for a while.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		ct := d.conntrack()
		missing := 0
		for _, f := range d.flows {
			if e, ok := ct[f.orig()]; !ok || !e.assured {
				missing++
			} else if f.group == "clean" {
				d.cleanID[f.sport] = e.id
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s the router tracks only %d of %d flows with their replies", len(d.flows)-missing, len(d.flows))
		}
	}
}

type ctEntry struct {
	id      uint32
	assured bool
}

// conntrack reads the router's UDP entries by original tuple.
func (d *day) conntrack() map[tkey]ctEntry {
	out := map[tkey]ctEntry{}
	_, err := d.ct.EachTuple(func(f netstate.Flow) bool {
		if f.Proto != "udp" || f.Family != "ipv4" {
			return true
		}
		k, err := tupleKey(f.Original)
		if err != nil {
			return true
		}
		out[k] = ctEntry{id: f.ID, assured: f.Assured}
		return true
	})
	if err != nil {
		d.t.Fatalf("conntrack dump: %v", err)
	}
	return out
}

func tupleKey(t cut.Tuple) (tkey, error) {
	s, err := netip.ParseAddr(t.Src)
	if err != nil {
		return tkey{}, err
	}
	ds, err := netip.ParseAddr(t.Dst)
	if err != nil {
		return tkey{}, err
	}
	return tkey{s, ds, t.SrcPort, t.DstPort}, nil
}

// bulkAddr is the i-th address of the bulk list: 10.91.16.1 onwards.
func bulkAddr(i int) netip.Addr {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], 0x0a5b1001+uint32(i))
	return netip.AddrFrom4(b)
}

// rangeAddrs is n consecutive addresses from first, as text.
func rangeAddrs(first string, n int) []string {
	a := netip.MustParseAddr(first)
	out := make([]string, n)
	for i := range out {
		out[i] = a.String()
		a = a.Next()
	}
	return out
}

func without(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

// banIPElements is what banIP's set holds at the start: dayBanIPSize
// addresses no flow goes to (every other one, so auto-merge keeps them
// single), the population's single addresses and a /26.
func banIPElements() []string {
	out := make([]string, 0, dayBanIPSize+21)
	for i := 0; i < dayBanIPSize; i++ {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], 0x64400000+uint32(2*i)) // 100.64.0.0 onwards
		out = append(out, netip.AddrFrom4(b).String())
	}
	out = append(out, "10.91.3.0/26")
	for i := 1; i < 40; i += 2 {
		out = append(out, "10.91.4."+strconv.Itoa(i))
	}
	return out
}

// banIPTable is banIP 1.8's shape: table inet banIP, a set named
// <feed>.v4 with flags interval and auto-merge, a chain that refers to it.
func banIPTable(elements []string) string {
	return "table inet banIP {\n\tset drop.v4 {\n\t\ttype ipv4_addr; flags interval; auto-merge;\n\t\telements = { " +
		strings.Join(elements, ", ") + " }\n\t}\n" +
		"\tchain pre {\n\t\ttype filter hook prerouting priority -100; policy accept;\n\t\tct state established,related accept\n\t\tip saddr @drop.v4 counter drop\n\t}\n}\n"
}

// fw4Reload is what fw4 does on every reload: its table is deleted and
// re-created in one transaction.
func (d *day) fw4Reload() {
	d.nft("table inet fw4\ndelete table inet fw4\n" +
		"table inet fw4 {\n\tset lan_devices { type ifname; elements = { \"lan0\" } }\n" +
		"\tchain input {\n\t\ttype filter hook input priority filter; policy accept;\n\t\tct state established,related accept\n\t}\n" +
		"\tchain forward {\n\t\ttype filter hook forward priority filter; policy accept;\n\t\tct state established,related accept\n\t\tiifname @lan_devices accept\n\t}\n}\n")
}

func (d *day) nft(script string) {
	d.t.Helper()
	if err := d.ld.lab.Nft(d.ld.lab.Router, script); err != nil {
		d.t.Fatal(err)
	}
}

func (d *day) ip(args ...string) {
	d.t.Helper()
	if out, err := d.ld.lab.Exec(d.ld.lab.Router, append([]string{"ip"}, args...)...); err != nil {
		d.t.Fatalf("%v: %s", err, out)
	}
}

func (d *day) hangup() {
	if err := d.ld.proc.Signal(syscall.SIGHUP); err != nil {
		d.t.Fatalf("SIGHUP: %v", err)
	}
}

func (d *day) restartBroker() {
	b, err := ubustest.Listen(d.ld.sock)
	if err != nil {
		d.t.Fatal(err)
	}
	d.ld.broker = b
	d.ubusUp = true
}

func (d *day) writeConfig(text string) {
	if err := os.WriteFile(filepath.Join(d.ld.root, "etc/config/fastpath"), []byte(text), 0o644); err != nil {
		d.t.Fatal(err)
	}
}

func (d *day) writeList(path string, lines []string) {
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		d.t.Fatal(err)
	}
}

// renameList replaces a list file as list updaters do: write a new file
// beside it, rename it over the old one.
func (d *day) renameList(path string, lines []string) {
	d.writeList(path+".new", lines)
	if err := os.Rename(path+".new", path); err != nil {
		d.t.Fatal(err)
	}
}

// setList is the model's side of a list change.
func (d *day) setList(name string, entries ...string) {
	m := map[netip.Prefix]bool{}
	for _, e := range entries {
		p, err := cut.ParsePrefix(e)
		if err != nil {
			d.t.Fatalf("list %s: %v", name, err)
		}
		m[p.Masked()] = true
	}
	d.lists[name] = m
}

// listed says which list (or "ubus") names a far end now.
func (d *day) listed(a netip.Addr) string {
	if d.manualAddr[a] {
		return "ubus cut of " + a.String()
	}
	for _, name := range sortedNames(d.lists) {
		l := d.lists[name]
		for bits := 32; bits >= 8; bits-- {
			if p, _ := a.Prefix(bits); l[p] {
				return "list " + name + " (" + p.String() + ")"
			}
		}
	}
	return ""
}

func sortedNames(m map[string]map[netip.Prefix]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (d *day) group(name string) []*dayFlow {
	var out []*dayFlow
	for _, f := range d.flows {
		if f.group == name {
			out = append(out, f)
		}
	}
	return out
}

func (d *day) tupleArgs(f *dayFlow, reason string) map[string]any {
	a := map[string]any{"proto": "udp", "src": labnet.ClientV4, "sport": int32(f.sport), "dst": f.dst.String(), "dport": int32(dayPort)}
	if reason != "" {
		a["reason"] = reason
	}
	return a
}

// call is a call an event makes, as LuCI or a script would: it must
// answer (within the hang bound), and its latency is kept.
func (d *day) call(method string, args map[string]any) {
	ctx, cancel := context.WithTimeout(context.Background(), dayHang)
	defer cancel()
	t0 := time.Now()
	_, err := rpc.CallFastpath(ctx, d.ld.sock, method, args)
	d.mu.Lock()
	d.callLats = append(d.callLats, time.Since(t0))
	d.mu.Unlock()
	if err != nil {
		d.t.Errorf("ubus call fastpath %s %v: %v", method, args, err)
	}
}

// newBurst opens dayBurst new connections from one client port, as fast
// as one socket can send: one datagram to each of dayBurst far ends, one
// in 20 of them in the listed 10.91.5.0/24.
func (d *day) newBurst(sport int) {
	var targets []tkey
	client := netip.MustParseAddr(labnet.ClientV4)
	d.burst = nil
	unlisted := 0
	for i := 0; i < dayBurst; i++ {
		var k tkey
		if i%20 == 0 {
			j := i / 20 // 1000 of them: 250 addresses x 4 ports
			k = tkey{client, netip.AddrFrom4([4]byte{10, 91, 5, byte(1 + j%250)}), uint16(sport), uint16(dayPort + 1 + j/250)}
			d.burst = append(d.burst, k)
		} else {
			// 19,000 of them in 10.91.160.0 - 10.91.254.200, listed nowhere.
			k = tkey{client, netip.AddrFrom4([4]byte{10, 91, byte(160 + unlisted/200), byte(1 + unlisted%200)}), uint16(sport), uint16(dayPort + 1 + unlisted%4)}
			unlisted++
		}
		targets = append(targets, k)
	}
	var c *net.UDPConn
	err := labnet.In(d.ld.lab.Client, func() (err error) {
		c, err = net.ListenUDP("udp", &net.UDPAddr{IP: client.AsSlice(), Port: sport})
		return err
	})
	if err != nil {
		d.t.Fatal(err)
	}
	defer c.Close()
	t0 := time.Now()
	sent := 0
	for _, k := range targets {
		if _, err := c.WriteToUDPAddrPort([]byte("burst"), netip.AddrPortFrom(k.dst, k.dport)); err == nil {
			sent++
		}
	}
	d.t.Logf("burst: %d of %d new connections sent in %v", sent, len(targets), time.Since(t0).Round(time.Millisecond))
}

// expectedCuts is the population's flows the model says are cut now.
func (d *day) expectedCuts() map[uint16]bool {
	out := map[uint16]bool{}
	for _, f := range d.flows {
		if d.manual[f.sport] || d.listed(f.dst) != "" {
			out[f.sport] = true
		}
	}
	return out
}

// evaluation is one look at the router against the model.
type evaluation struct {
	cutPending []string // listed flows not (yet) cut
	pending    []string // other checks that must come to hold
	violations []string // checks that failed outright
	cuts       int      // flows of the population cut
	burstCut   int      // the burst's listed connections in the cut set
	burstGone  int      // ... or without a conntrack entry
	burstSeen  int      // the burst's connections conntrack holds
}

// cutSet reads the tuples in the cut set.
func (d *day) cutSet() (map[tkey]bool, error) {
	c, err := nftables.New(nftables.WithNetNSFd(d.ns))
	if err != nil {
		return nil, err
	}
	defer c.CloseLasting()
	set, err := c.GetSetByName(&nftables.Table{Name: cut.TableName, Family: nftables.TableFamilyNetdev}, cut.SetName4)
	if err != nil {
		return nil, fmt.Errorf("set netdev %s %s: %w", cut.TableName, cut.SetName4, err)
	}
	els, err := c.GetSetElements(set)
	if err != nil {
		return nil, fmt.Errorf("elements of netdev %s %s: %w", cut.TableName, cut.SetName4, err)
	}
	out := make(map[tkey]bool, len(els))
	for _, el := range els {
		tu, err := cut.DecodeKey(el.Key)
		if err != nil || tu.Proto != "udp" {
			continue
		}
		if k, err := tupleKey(tu); err == nil {
			out[k] = true
		}
	}
	return out, nil
}

func (d *day) evaluate() evaluation {
	var ev evaluation
	ct := d.conntrack()
	set, err := d.cutSet()
	if err != nil {
		ev.pending = append(ev.pending, "[cut set unreadable] "+err.Error())
	}
	client := netip.MustParseAddr(labnet.ClientV4)
	population := map[tkey]bool{}
	for _, f := range d.flows {
		o, r := f.orig(), f.reply()
		population[o], population[r] = true, true
		why := d.listed(f.dst)
		if why == "" && d.manual[f.sport] {
			why = "ubus cut of the connection"
		}
		// A cut lives while its sender sends: the direction the client
		// keeps sending stays in the set; the other expires once no frame
		// of it comes (the far end never hears from a cut client).
		isCut := set[o] || set[r]
		if isCut {
			ev.cuts++
		}
		switch {
		case why != "":
			d.everCut[f.sport] = true
			d.everAddr[f.dst] = true
			if !isCut {
				ev.cutPending = append(ev.cutPending, fmt.Sprintf("[not cut] %v is not cut (neither tuple in the cut set): its far end is on %s", o, why))
			}
		case isCut:
			if d.everCut[f.sport] {
				ev.pending = append(ev.pending, fmt.Sprintf("[not released] %v is still cut, though no list or call names it any more", o))
			} else {
				ev.violations = append(ev.violations, fmt.Sprintf("[unlisted cut] %v is cut, though nothing ever listed it", o))
			}
		case d.everCut[f.sport]:
			if _, ok := ct[o]; !ok {
				ev.pending = append(ev.pending, fmt.Sprintf("[released, not forwarding] %v was released but does not forward again (no conntrack entry)", o))
			}
		}
		if id, ok := d.cleanID[f.sport]; ok {
			if e, present := ct[o]; !present || e.id != id {
				ev.violations = append(ev.violations, fmt.Sprintf("[unlisted cut] %v, never listed, lost its conntrack entry (id %d, now %d, present %v)", o, id, e.id, present))
				delete(d.cleanID, f.sport) // said once
			}
		}
	}
	for k := range set {
		if population[k] {
			continue
		}
		far := k.dst
		if far == client {
			far = k.src
		}
		switch {
		case d.listed(far) != "":
		case d.everAddr[far]:
			ev.pending = append(ev.pending, fmt.Sprintf("[not released] %v is still cut, though no list names %s any more", k, far))
		default:
			ev.violations = append(ev.violations, fmt.Sprintf("[unlisted cut] %v is in the cut set, though nothing ever listed %s", k, far))
		}
	}
	for _, k := range d.burst {
		d.everAddr[k.dst] = true
		_, tracked := ct[k]
		switch {
		case set[k]:
			ev.burstCut++
		case !tracked:
			ev.burstGone++
		default:
			ev.cutPending = append(ev.cutPending, fmt.Sprintf("[not cut] %v (new, in the burst) is not cut: its far end is on %s", k, d.listed(k.dst)))
		}
	}
	if d.burst != nil {
		sport := d.burst[0].sport
		for k := range ct {
			if k.sport == sport && k.src == client {
				ev.burstSeen++
			}
		}
	}
	return ev
}

// answer is one call of LuCI's polling, measured.
func (d *day) answer(method string, args map[string]any) (ubus.Table, int, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dayHang)
	defer cancel()
	t0 := time.Now()
	a, err := rpc.CallFastpath(ctx, d.ld.sock, method, args)
	lat := time.Since(t0)
	if err != nil {
		return nil, 0, lat, err
	}
	enc, err := ubus.EncodeTable(a)
	if err != nil {
		return nil, 0, lat, fmt.Errorf("encode the answer again: %v", err)
	}
	return a, len(enc), lat, nil
}

// procStatus reads the daemon's VmRSS and VmHWM (bytes) and Threads.
func (d *day) procStatus() (rss, hwm, threads int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.ld.proc.Pid))
	if err != nil {
		d.t.Fatalf("the daemon's /proc status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			kb, _ := strconv.Atoi(f[1])
			rss = kb << 10
		case "VmHWM:":
			kb, _ := strconv.Atoi(f[1])
			hwm = kb << 10
		case "Threads:":
			threads, _ = strconv.Atoi(f[1])
		}
	}
	return rss, hwm, threads
}

// check runs the invariants after event n until the eventual ones hold or
// dayHang passes, then LuCI's polling calls, and records the figures.
func (d *day) check(n int, name string, took time.Duration, newCuts bool) dayRow {
	row := dayRow{n: n, name: name, took: took, cutLatency: -1}
	end := time.Now()
	var ev evaluation
	for {
		t0 := time.Now()
		ev = d.evaluate()
		d.looks = append(d.looks, time.Since(t0))
		for _, v := range ev.violations {
			row.violations = append(row.violations, v)
		}
		if len(d.fresh(ev.cutPending)) == 0 && newCuts && row.cutLatency < 0 {
			row.cutLatency = time.Since(end)
		}
		open := d.fresh(append(ev.cutPending, ev.pending...))
		if !d.ubusUp {
			// The kernel side must go on without ubusd.
		} else if w := d.degraded(); w != "" {
			open = append(open, w)
		}
		if len(open) == 0 {
			break
		}
		if time.Since(end) > dayHang {
			for _, p := range open {
				d.stuck[p] = true
				row.violations = append(row.violations, fmt.Sprintf("%s (after %v)", p, dayHang))
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// What outlived the bound before is reported again while it lasts.
	for _, p := range append(ev.cutPending, ev.pending...) {
		if d.stuck[p] && !containsPrefix(row.violations, p) {
			row.violations = append(row.violations, p+" (still)")
		}
	}
	row.settle = time.Since(end)
	if d.burst != nil {
		d.t.Logf("event %d: of the burst's %d connections to listed far ends, %d are in the cut set and %d have no conntrack entry; conntrack holds %d of the burst's connections", n, len(d.burst), ev.burstCut, ev.burstGone, ev.burstSeen)
		d.burst = nil
	}
	if d.ubusUp {
		for _, c := range []struct {
			method string
			args   map[string]any
		}{
			{"status", nil},
			{"cuts", nil},
			{"cuts", map[string]any{"limit": int32(rpc.MaxCutLimit)}},
			{"flows", nil},
			{"flows", map[string]any{"limit": int32(rpc.MaxFlowLimit)}},
		} {
			label := c.method
			if c.args != nil {
				label += fmt.Sprintf(" limit %v", c.args["limit"])
			}
			_, size, lat, err := d.answer(c.method, c.args)
			row.answerLat = append(row.answerLat, lat)
			d.answerLats = append(d.answerLats, lat)
			if err != nil {
				row.violations = append(row.violations, fmt.Sprintf("[answer] %s: no answer after %v: %v", label, lat.Round(time.Millisecond), err))
				continue
			}
			if size > row.maxAnswer {
				row.maxAnswer, row.maxAnswerM = size, label
			}
			if size >= ubus.MaxMessageLen {
				row.violations = append(row.violations, fmt.Sprintf("[answer size] %s: answer of %d bytes, ubusd takes at most %d", label, size, ubus.MaxMessageLen))
			}
		}
	}
	row.cuts = ev.cuts + ev.burstCut
	row.rss, row.hwm, row.threads = d.procStatus()
	if row.rss > d.rssBound {
		row.violations = append(row.violations, fmt.Sprintf("[RSS] %d MiB after the event, over the bound of %d MiB (GOMEMLIMIT %s + %d MiB)", row.rss>>20, d.rssBound>>20, d.memLimit, dayRSSOverhead>>20))
	}
	if row.threads > dayThreadBound {
		row.violations = append(row.violations, fmt.Sprintf("[threads] %d, over the bound of %d", row.threads, dayThreadBound))
	}
	select {
	case <-d.ld.exited:
		d.t.Fatalf("event %d (%s): the daemon ended", n, name)
	default:
	}
	cl := "-"
	if row.cutLatency >= 0 {
		cl = row.cutLatency.Round(time.Millisecond).String()
	}
	d.t.Logf("event %2d %-70.70s took %7v, settled %7v, cut latency %7s, %4d cuts active, answers max %7d B (%s), worst %v, RSS %3d MiB (peak %d), %2d threads, %d violations",
		n, name, took.Round(time.Millisecond), row.settle.Round(time.Millisecond), cl, row.cuts, row.maxAnswer, row.maxAnswerM,
		worst(row.answerLat).Round(time.Millisecond), row.rss>>20, row.hwm>>20, row.threads, len(row.violations))
	// Every violation is printed once, when it is new; one that lasts into
	// later events is counted there by kind.
	still := map[string]int{}
	var kinds []string
	fresh := 0
	for _, v := range row.violations {
		if !strings.HasSuffix(v, "(still)") {
			d.t.Errorf("event %d (%s): %s", n, name, v)
			fresh++
			continue
		}
		kind := v[:strings.Index(v, "]")+1]
		if still[kind] == 0 {
			kinds = append(kinds, kind)
		}
		still[kind]++
	}
	for _, kind := range kinds {
		d.t.Logf("event %d: %d %s violations of earlier events last", n, still[kind], kind)
	}
	if fresh > 0 && d.needs != "" {
		d.t.Errorf("event %d needs %s", n, d.needs)
	}
	return row
}

func containsPrefix(list []string, s string) bool {
	for _, l := range list {
		if strings.HasPrefix(l, s) {
			return true
		}
	}
	return false
}

// fresh drops the checks that already outlived the bound at an earlier
// event: they are reported, not waited for again.
func (d *day) fresh(open []string) []string {
	var out []string
	for _, p := range open {
		if !d.stuck[p] {
			out = append(out, p)
		}
	}
	return out
}

// degraded names the watchers status reports degraded, or "".
func (d *day) degraded() string {
	a, _, _, err := d.answer("status", nil)
	if err != nil {
		return "[watchers] status does not answer: " + err.Error()
	}
	var st struct {
		Watchers []struct {
			Name      string `json:"name"`
			State     string `json:"state"`
			LastError string `json:"last_error"`
		} `json:"watchers"`
	}
	if err := ubus.Decode(a, &st); err != nil {
		return "[watchers] status answer: " + err.Error()
	}
	var bad []string
	for _, w := range st.Watchers {
		if w.State != "running" {
			bad = append(bad, w.Name+" "+w.State+" ("+w.LastError+")")
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return "[watchers] not running: " + strings.Join(bad, ", ")
}

func worst(ds []time.Duration) time.Duration {
	var w time.Duration
	for _, d := range ds {
		w = max(w, d)
	}
	return w
}

// percentile is the p-th percentile of ds by nearest rank (p in 0-100).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := (p*len(s) + 99) / 100
	return s[max(rank, 1)-1]
}

// dayFigure is one row of the day's report: a latency's distribution or
// a size, against its goal.
type dayFigure struct {
	Name  string  `json:"name"`
	N     int     `json:"n,omitempty"`
	P50ms float64 `json:"p50_ms,omitempty"`
	P95ms float64 `json:"p95_ms,omitempty"`
	MaxMs float64 `json:"max_ms,omitempty"`
	Value string  `json:"value,omitempty"`
	Goal  string  `json:"goal"`
	Met   bool    `json:"met"`
	timed bool    // judged only by make bench-day
}

func ms(d time.Duration) float64 { return float64(d.Round(100*time.Microsecond)) / 1e6 }

// latencyFigure judges ds by its worst value (every one within the goal)
// or by its 95th percentile.
func latencyFigure(name string, ds []time.Duration, byP95 bool) dayFigure {
	f := dayFigure{Name: name, N: len(ds), P50ms: ms(percentile(ds, 50)), P95ms: ms(percentile(ds, 95)), MaxMs: ms(worst(ds)), timed: true}
	if byP95 {
		f.Goal, f.Met = fmt.Sprintf("p95 <= %v", dayGoal), percentile(ds, 95) <= dayGoal
	} else {
		f.Goal, f.Met = fmt.Sprintf("max <= %v", dayGoal), worst(ds) <= dayGoal
	}
	return f
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// report prints the day's figures and fails on any violation or when the
// day did not reach its size. Its latencies are judged against their goals
// only under make bench-day (FASTPATH_DAY_BENCH=FILE, which also writes
// them to FILE as JSON): make test runs on loaded shared machines.
func (d *day) report(total time.Duration) {
	var cutLats []time.Duration
	maxAnswer, maxRSS, maxHWM, maxThreads, maxCuts, violations, carried := 0, 0, 0, 0, 0, 0, 0
	maxAnswerM := ""
	var failed []string
	for _, r := range d.rows {
		if r.cutLatency >= 0 {
			cutLats = append(cutLats, r.cutLatency)
		}
		if r.maxAnswer > maxAnswer {
			maxAnswer, maxAnswerM = r.maxAnswer, r.maxAnswerM
		}
		maxRSS, maxHWM, maxThreads, maxCuts = max(maxRSS, r.rss), max(maxHWM, r.hwm), max(maxThreads, r.threads), max(maxCuts, r.cuts)
		fresh := 0
		for _, v := range r.violations {
			if !strings.HasSuffix(v, "(still)") {
				fresh++
			}
		}
		violations += fresh
		carried += len(r.violations) - fresh
		if fresh > 0 {
			failed = append(failed, strconv.Itoa(r.n))
		}
	}
	benchFile := os.Getenv("FASTPATH_DAY_BENCH")
	figures := []dayFigure{
		latencyFigure("cut latency (event's end to all cut)", cutLats, false),
		latencyFigure("answers: status, cuts, flows", d.answerLats, true),
		latencyFigure("calls: reload, set, cut, uncut", d.callLats, true),
		{Name: "RSS after an event (VmRSS)", Value: fmt.Sprintf("%d MiB", maxRSS>>20), Goal: fmt.Sprintf("<= %d MiB", d.rssBound>>20), Met: maxRSS <= d.rssBound},
		{Name: "peak RSS (VmHWM)", Value: fmt.Sprintf("%d MiB", maxHWM>>20), Goal: fmt.Sprintf("<= %d MiB", dayPeakRSSBound>>20), Met: maxHWM <= dayPeakRSSBound, timed: true},
		{Name: "cuts active at once", Value: strconv.Itoa(maxCuts), Goal: fmt.Sprintf(">= %d", dayCutsAtOnce), Met: maxCuts >= dayCutsAtOnce},
		{Name: "banIP set (elements)", Value: strconv.Itoa(dayBanIPSize + 21), Goal: ">= 100000", Met: dayBanIPSize+21 >= 100000},
	}
	d.t.Logf("router's day at a 128 MB router's size: %d events in %v; the daemon with GOMEMLIMIT=%s (the init script's, MemTotal %d kB), GOGC default",
		len(d.rows), total.Round(time.Second), d.memLimit, dayMemTotalKB)
	d.t.Logf("  %-40s %5s %9s %9s %9s  %-12s %s", "figure", "n", "p50", "p95", "max", "goal", "")
	for _, f := range figures {
		verdict := "missed"
		if f.Met {
			verdict = "met"
		}
		if f.timed && benchFile == "" {
			verdict = "(judged by make bench-day)"
		}
		if f.Value != "" {
			d.t.Logf("  %-40s %5s %9s %9s %9s  %-12s %s", f.Name, "", "", "", f.Value, f.Goal, verdict)
			continue
		}
		d.t.Logf("  %-40s %5d %7.0fms %7.0fms %7.0fms  %-12s %s", f.Name, f.N, f.P50ms, f.P95ms, f.MaxMs, f.Goal, verdict)
	}
	d.t.Logf("  %-40s %d bytes (%s; ubusd's limit %d)", "max answer size (blobmsg)", maxAnswer, maxAnswerM, ubus.MaxMessageLen)
	d.t.Logf("  %-40s %d (bound %d; the daemon reports no goroutine count)", "max OS threads", maxThreads, dayThreadBound)
	d.t.Logf("  %-40s %v median (hang bound %v)", "one look at the router", median(d.looks).Round(time.Millisecond), dayHang)
	if d.ubusUp {
		if a, _, _, err := d.answer("status", nil); err == nil {
			var st struct {
				Watchers []struct {
					Name      string `json:"name"`
					State     string `json:"state"`
					Restarts  int    `json:"restarts"`
					LastError string `json:"last_error"`
				} `json:"watchers"`
			}
			if ubus.Decode(a, &st) == nil {
				for _, w := range st.Watchers {
					d.t.Logf("  watcher %-32s %s, %d restarts (last error: %s)", w.Name, w.State, w.Restarts, w.LastError)
				}
			}
		}
	}
	d.t.Logf("  %-40s %d (new in events %s; and %d reports of them lasting into later events)", "invariant violations", violations, strings.Join(failed, ", "), carried)
	if benchFile != "" {
		out, _ := json.MarshalIndent(map[string]any{
			"events": len(d.rows), "seconds": total.Seconds(), "gomemlimit": d.memLimit, "rss_bound_mib": d.rssBound >> 20,
			"invariant_violations": violations, "figures": figures,
		}, "", "  ")
		if err := os.WriteFile(benchFile, append(out, '\n'), 0o644); err != nil {
			d.t.Errorf("bench report: %v", err)
		}
	}
	if violations > 0 {
		d.t.Errorf("the router's day had %d invariant violations, new in events %s (each is printed above)", violations, strings.Join(failed, ", "))
	}
	if maxCuts < dayCutsAtOnce {
		d.t.Errorf("the day reached %d active cuts at once at most; a 128 MB router's day has at least %d", maxCuts, dayCutsAtOnce)
	}
}
