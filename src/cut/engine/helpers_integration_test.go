//go:build linux

package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/cut/engine"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"github.com/fastpath-wrt/fastpath/src/logger"
)

// rig is a lab with the cut engine running on its router.
type rig struct {
	lab *labnet.Lab
	ct  *conntrack.Client
	eng *engine.Engine
}

func newRig(t *testing.T, prefix string, cfg cut.Config) *rig {
	t.Helper()
	if m := labnet.Missing(); m != "" {
		t.Skip("needs " + m)
	}
	lab, err := labnet.New(prefix, true)
	if err != nil {
		t.Fatalf("build netns lab (needs veth, netns, nf_conntrack, nft masquerade): %v", err)
	}
	t.Cleanup(lab.Close)
	r := &rig{lab: lab}
	log := logger.New()
	log.SetLevel(logger.WarnLevel)
	if os.Getenv("FASTPATH_TEST_DEBUG") != "" {
		log.SetLevel(logger.DebugLevel)
	}
	err = labnet.In(lab.Router, func() (err error) {
		if r.ct, err = conntrack.Open(); err != nil {
			return fmt.Errorf("conntrack (nf_conntrack_netlink): %w", err)
		}
		r.eng, err = engine.NewEngine(r.ct, logger.NewEntry(log))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.eng.Cleanup(); r.ct.Close() })
	if err := r.eng.Sync([]string{"lan0", "wan0"}, cfg); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if s := r.eng.Summary(); cfg.InFastpath && !s.InFastpath {
		t.Fatalf("cut not in the fast path on this kernel (needs nftables netdev family, ingress hook): %s", s.Reason)
	}
	return r
}

// testConfig cuts in the netdev table on every device: the tests of the
// XDP backend (xdp_integration_test.go) ask for it.
func testConfig() cut.Config {
	return cut.Config{Enabled: true, InFastpath: true, Expiry: 2 * time.Second, SetSize: 65536, Backend: cut.BackendNetdev}
}

// stackCounters counts, on the router, the TCP and UDP frames that get
// past the cut chain into the stack (ARP and neighbour discovery are not
// the flood): a netdev ingress chain at priority +10 per device.
func (r *rig) addStackCounters(t *testing.T) {
	t.Helper()
	err := r.lab.Nft(r.lab.Router, `table netdev count {
	counter wan0 { }
	counter lan0 { }
	chain wan {
		type filter hook ingress device "wan0" priority 10; policy accept;
		meta l4proto { tcp, udp } counter name "wan0"
	}
	chain lan {
		type filter hook ingress device "lan0" priority 10; policy accept;
		meta l4proto { tcp, udp } counter name "lan0"
	}
}
`)
	if err != nil {
		t.Fatal(err)
	}
}

var packetsRE = regexp.MustCompile(`packets (\d+)`)

func (r *rig) stackFrames(t *testing.T, dev string) uint64 {
	t.Helper()
	out, err := r.lab.Exec(r.lab.Router, "nft", "list", "counter", "netdev", "count", dev)
	if err != nil {
		t.Fatal(err)
	}
	m := packetsRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no packet count in %q", out)
	}
	n, _ := strconv.ParseUint(m[1], 10, 64)
	return n
}

// flow is a UDP conversation with fixed ports: the client sends a frame
// every 10 ms (keeping the NAT mapping), the server floods the address the
// client's frames come from at a fixed rate. Both ends count what arrives.
type flow struct {
	toClient, toServer     atomic.Uint64
	serverSent, clientSent atomic.Uint64
	stop                   context.CancelFunc
	done                   chan struct{}
	closeSockets           func() // frees the ports for a new flow of the same tuple
}

func (r *rig) startFlow(t *testing.T, clientAddr, serverAddr string, floodEvery time.Duration, maxFrames uint64) *flow {
	t.Helper()
	srv, err := labnet.ListenUDP(r.lab.Server, serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := labnet.DialUDP(r.lab.Client, clientAddr, serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &flow{stop: cancel, done: make(chan struct{})}
	peer := make(chan struct{})
	var latest atomic.Pointer[net.UDPAddr]
	go func() { // server: count, learn the NATed client address
		buf := make([]byte, 2048)
		for {
			n, from, err := srv.ReadFromUDP(buf)
			if err != nil {
				return
			}
			if n > 0 {
				f.toServer.Add(1)
				// Like a real UDP server, answer where the client's frames come
				// from now: a new NAT mapping after a release moves it.
				if latest.Swap(from) == nil {
					close(peer)
				}
			}
		}
	}()
	go func() { // client: count
		buf := make([]byte, 2048)
		for {
			if _, err := cli.Read(buf); err != nil {
				return
			}
			f.toClient.Add(1)
		}
	}()
	go func() { // client: keep sending
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if _, err := cli.Write([]byte("client")); err == nil {
					f.clientSent.Add(1)
				}
			}
		}
	}()
	go func() { // server: the flood, until maxFrames are sent or the test stops it
		defer close(f.done)
		select {
		case <-peer:
		case <-time.After(3 * time.Second):
			return
		case <-ctx.Done():
			return
		}
		// A fixed rate: each tick sends what the schedule asks for so far, so
		// a busy machine delays frames but does not lower the rate.
		payload := make([]byte, 512)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		start := time.Now()
		// No bound in time: on a loaded machine a test's rounds take longer
		// than any rate would predict, and a flood that ended before them
		// would fail them. The test's cleanup stops it.
		for f.serverSent.Load() < maxFrames {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				// At most a tick's worth of frames between looks at ctx: a rate
				// beyond what the machine sends must not outlive the test.
				due := min(uint64(now.Sub(start)/floodEvery), f.serverSent.Load()+uint64(time.Millisecond/floodEvery)+1)
				for f.serverSent.Load() < due && f.serverSent.Load() < maxFrames {
					if _, err := srv.WriteToUDP(payload, latest.Load()); err != nil {
						break
					}
					f.serverSent.Add(1)
				}
			}
		}
	}()
	f.closeSockets = func() { cancel(); <-f.done; srv.Close(); cli.Close() }
	t.Cleanup(f.closeSockets)
	return f
}

// delivered is the UDP datagrams, IPv4 and IPv6, that the kernel of
// namespace ns delivered to its sockets (Udp InDatagrams and
// Udp6InDatagrams): what arrived, whether or not the test's readers have
// read it yet, which on a loaded machine can be much later.
func (r *rig) delivered(t *testing.T, ns string) uint64 {
	t.Helper()
	out, err := r.lab.Exec(ns, "cat", "/proc/net/snmp", "/proc/net/snmp6")
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	found := 0
	var names []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[0] == "Udp6InDatagrams":
			v, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				t.Fatalf("Udp6InDatagrams %q: %v", f[1], err)
			}
			n += v
			found++
		case len(f) > 1 && f[0] == "Udp:" && names == nil:
			names = f
		case len(f) > 1 && f[0] == "Udp:":
			for i, name := range names {
				if name == "InDatagrams" && i < len(f) {
					v, err := strconv.ParseUint(f[i], 10, 64)
					if err != nil {
						t.Fatalf("Udp InDatagrams %q: %v", f[i], err)
					}
					n += v
					found++
				}
			}
		}
	}
	if found != 2 {
		t.Fatalf("no Udp InDatagrams and Udp6InDatagrams in %s's /proc/net/snmp{,6}:\n%s", ns, out)
	}
	return n
}

// hang bounds a wait for what must happen: long enough that only a hang
// exceeds it on a loaded machine, and no cost when it happens at once.
const hang = 30 * time.Second

// cutFlood cuts the flood's forwarded flow once it has a conntrack entry:
// after a release the client's next frame (every 10 ms) makes a new one.
// Until then the only entries of the server's address can be those the
// flood's frames made to the router's own address between the release and
// that frame; a cut without local refuses them, and that answer means "not
// yet", not a failure. Any other error fails the test.
func (r *rig) cutFlood(t *testing.T, round int, server netip.Prefix, reason string) []cut.Cut {
	t.Helper()
	var cuts []cut.Cut
	var refused error
	if !waitFor(hang, func() bool {
		var err error
		cuts, err = r.eng.CutAddress(context.Background(), server, reason, "test", cut.CutOptions{})
		var re *cut.RefusedError
		if errors.As(err, &re) {
			refused = err
			return false
		}
		if err != nil {
			t.Fatalf("round %d: CutAddress: %v", round, err)
		}
		return len(cuts) > 0
	}) {
		t.Fatalf("round %d: no forwarded flow of the server to cut within %v (last refusal: %v)", round, hang, refused)
	}
	return cuts
}

// waitFor polls cond every 5 ms until it holds or the timeout passes.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}
