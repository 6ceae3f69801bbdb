//go:build linux && !mips && !mipsle

package xdp

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
)

// fwdRig is labnet's topology (the router masquerades on wan0) with a
// flowtable on the router's lan0 and wan0 and the backend forwarding there.
type fwdRig struct {
	lab   *labnet.Lab
	b     *Backend
	netns int
}

const fwdFlowtable = `table inet fpt {
	flowtable ft {
		hook ingress priority 0; devices = { lan0, wan0 };
	}
	chain forward {
		type filter hook forward priority 0; policy accept;
		meta l4proto { tcp, udp } flow add @ft
	}
}
`

// TestIntegrationForward runs the forward stage through a flowtable kernel
// (the VM lab's: FASTPATH_EXPECT_FLOWTABLE=1). On a kernel without
// flowtables it checks what such a router gets: the backend opens, says
// why it does not forward, and cuts.
func TestIntegrationForward(t *testing.T) {
	needRoot(t)
	if ftErr := flowtableKernel(); ftErr != nil {
		if os.Getenv("FASTPATH_EXPECT_FLOWTABLE") == "1" {
			t.Fatalf("this kernel should have flowtables: %v", ftErr)
		}
		r := newRig(t)
		b, err := Open(Options{Veth: true, Forward: true, MaxEntries: 64, NetNS: r.netns})
		if err != nil {
			t.Fatalf("Open with Forward on a kernel without flowtables: %v (want the cut-only program)", err)
		}
		defer b.Close()
		on, why := b.Forwarding()
		t.Logf("no flowtables (%v): Forwarding() = %v, %v", ftErr, on, why)
		if on || why == nil || !strings.Contains(why.Error(), "BTF") && !strings.Contains(why.Error(), kfuncName) {
			t.Errorf("Forwarding() = %v, %v; want false and why, naming BTF or %s", on, why, kfuncName)
		}
		if d := b.Attach("lan0"); !d.XDP {
			t.Errorf("Attach(lan0) = %+v: the cut-only program should run", d)
		}
		t.Run("flowtable", func(t *testing.T) {
			t.Skip("this kernel has no flowtables; the VM lab runs the forward tests (FASTPATH_EXPECT_FLOWTABLE=1)")
		})
		return
	}
	t.Run("TCPWithNAT", forwardTCPWithNAT)
	t.Run("UDP", forwardUDP)
	t.Run("CutFirst", forwardCutFirst)
}

// flowtableKernel tries a flowtable in a namespace of its own.
func flowtableKernel() error {
	lab, err := labnet.New("xft", false)
	if err != nil {
		return err
	}
	defer lab.Close()
	return lab.Nft(lab.Router, fwdFlowtable)
}

func newFwdRig(t *testing.T) *fwdRig {
	t.Helper()
	lab, netns := routerLab(t, "xfw", true)
	if err := lab.Nft(lab.Router, fwdFlowtable); err != nil {
		t.Fatalf("flowtable: %v", err)
	}
	r := &fwdRig{lab: lab, netns: netns}
	var err error
	r.b, err = Open(Options{Veth: true, Forward: true, MaxEntries: 1024, NetNS: r.netns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.b.Close() })
	if on, err := r.b.Forwarding(); !on {
		t.Fatalf("the backend does not forward on a kernel with flowtables: %v", err)
	}
	for _, dev := range []string{"lan0", "wan0"} {
		if d := r.b.Attach(dev); !d.XDP {
			t.Fatalf("Attach(%s) = %+v, want native XDP", dev, d)
		}
	}
	// The ends send whole checksums, as frames from a wire have them (a
	// veth hands on a local socket's partial checksum, which an XDP
	// program cannot complete), and take redirected frames: a veth does
	// only while its peer runs an XDP program.
	fd, _ := passProgram(t)
	for _, end := range []struct{ ns, dev string }{{lab.Client, "c0"}, {lab.Server, "s0"}} {
		if _, err := lab.Exec(end.ns, "ethtool", "-K", end.dev, "tx", "off"); err != nil {
			t.Fatal(err)
		}
		c := nsConn(t, end.ns)
		l, err := queryLink(c, end.dev)
		if err != nil {
			t.Fatal(err)
		}
		if err := setXDP(c, l.index, int32(fd), xdpFlagDrvMode, -1); err != nil {
			t.Fatalf("pass program on %s: %v", end.dev, err)
		}
	}
	return r
}

func nsConn(t *testing.T, ns string) *netlink.Conn {
	t.Helper()
	fd, err := unix.Open("/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	c, err := netlink.Dial(unix.NETLINK_ROUTE, &netlink.Config{NetNS: fd})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// udpEcho is a UDP socket of the client's port cport, talking to an echo
// on the server's port sport; both close at the test's end.
func (r *fwdRig) udpEcho(t *testing.T, cport, sport int) *net.UDPConn {
	t.Helper()
	echo, err := labnet.EchoUDP(r.lab.Server, sport)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { echo.Close() })
	c, err := labnet.DialUDP(r.lab.Client, net.JoinHostPort(labnet.ClientV4, strconv.Itoa(cport)), net.JoinHostPort(labnet.ServerV4, strconv.Itoa(sport)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (r *fwdRig) counters(t *testing.T) (uint64, uint64) {
	t.Helper()
	c, err := r.b.ForwardCounters()
	if err != nil {
		t.Fatal(err)
	}
	return c.Forwarded, c.Missed
}

// exchange sends n bytes each way over one TCP connection from the client
// to the server at addr and checks that both ends got every byte; it
// returns the address the server saw the client as.
func exchange(t *testing.T, lab *labnet.Lab, addr string, n int) string {
	t.Helper()
	ln, err := labnet.ListenTCP(lab.Server, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	want := sha256.Sum256(data)
	type result struct {
		peer string
		sum  [32]byte
		err  error
	}
	served := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			served <- result{err: err}
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(hang))
		h := sha256.New()
		if _, err := io.CopyN(h, c, int64(n)); err != nil {
			served <- result{err: err}
			return
		}
		var res result
		copy(res.sum[:], h.Sum(nil))
		res.peer = c.RemoteAddr().(*net.TCPAddr).IP.String()
		_, res.err = c.Write(data)
		served <- res
	}()
	c, err := labnet.DialTCP(lab.Client, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(hang))
	if _, err := c.Write(data); err != nil {
		t.Fatal(err)
	}
	back := make([]byte, n)
	if _, err := io.ReadFull(c, back); err != nil {
		t.Fatalf("reading the server's %d bytes: %v", n, err)
	}
	res := <-served
	if res.err != nil {
		t.Fatalf("server: %v", res.err)
	}
	if res.sum != want {
		t.Errorf("the server got other bytes than the client sent")
	}
	if !bytes.Equal(back, data) {
		t.Errorf("the client got other bytes than the server sent")
	}
	return res.peer
}

// A TCP connection through the masquerading router is forwarded in the
// driver both ways, NAT and checksums right: the ends get every byte (their
// stacks check the checksums), and the server sees the router's address.
func forwardTCPWithNAT(t *testing.T) {
	r := newFwdRig(t)
	for _, tc := range []struct{ name, addr, wantPeer string }{
		{"ipv4", net.JoinHostPort(labnet.ServerV4, "5301"), labnet.RouterWANV4},
		{"ipv6", net.JoinHostPort(labnet.ServerV6, "5302"), labnet.RouterWANV6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f0, _ := r.counters(t)
			const n = 4 << 20
			peer := exchange(t, r.lab, tc.addr, n)
			f1, m1 := r.counters(t)
			t.Logf("%s: %d frames forwarded in the driver for %d bytes each way (%d TCP/UDP frames found no flow); the server saw %s", tc.name, f1-f0, n, m1, peer)
			if peer != tc.wantPeer {
				t.Errorf("the server saw the client as %s, want the router's %s (masquerade)", peer, tc.wantPeer)
			}
			// 4 MiB each way is about 2,900 full frames each way: all but a
			// connection's first packets take the XDP path.
			if f1-f0 < 2000 {
				t.Errorf("%d frames forwarded in the driver, want most of the connection's (>= 2000)", f1-f0)
			}
		})
	}
}

// UDP, masqueraded: every datagram arrives with its bytes, both ways.
func forwardUDP(t *testing.T) {
	r := newFwdRig(t)
	c := r.udpEcho(t, 40001, 5303)
	f0, _ := r.counters(t)
	buf := make([]byte, 2048)
	got, lost := 0, 0
	for i := 0; i < 400 && lost < 20; i++ {
		msg := []byte(strings.Repeat(string(rune('a'+i%26)), 1000) + time.Now().String())
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		n, err := c.Read(buf)
		if err != nil {
			lost++
			continue // a lost datagram; counted below
		}
		if !bytes.Equal(buf[:n], msg) {
			t.Fatalf("datagram %d came back changed", i)
		}
		got++
	}
	f1, _ := r.counters(t)
	c1, _ := r.b.ForwardCounters()
	t.Logf("%d of 400 datagrams echoed; %d frames forwarded in the driver; counters %+v", got, f1-f0, c1)
	if got < 390 {
		t.Errorf("%d of 400 datagrams came back, want nearly all", got)
	}
	if f1-f0 < 700 {
		t.Errorf("%d frames forwarded in the driver, want nearly all of the 800 (both ways)", f1-f0)
	}
}

// A cut holds where the program forwards: the cut stage runs first.
func forwardCutFirst(t *testing.T) {
	r := newFwdRig(t)
	c := r.udpEcho(t, 40002, 5304)
	buf := make([]byte, 2048)
	ask := func() bool {
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, err := c.Read(buf)
		return err == nil
	}
	for i := 0; i < 20 && !ask(); i++ {
	}
	for i := 0; i < 20; i++ {
		ask() // offloaded now, forwarded in the driver
	}
	f0, _ := r.counters(t)
	if f0 == 0 {
		t.Fatal("nothing forwarded in the driver before the cut")
	}
	orig := cut.Tuple{Proto: "udp", Src: labnet.ClientV4, SrcPort: 40002, Dst: labnet.ServerV4, DstPort: 5304}
	if err := r.b.Cut([]cut.Tuple{orig}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if ask() {
			t.Fatalf("an answer came back through a cut connection (round %d)", i)
		}
	}
	if n := r.b.packetsOf(t, orig); n < 10 {
		t.Errorf("the cut counted %d frames, want the 10 sent", n)
	}
}

func (b *Backend) packetsOf(t *testing.T, tu cut.Tuple) uint64 {
	t.Helper()
	s, ok, err := b.Lookup(tu)
	if err != nil || !ok {
		t.Fatalf("Lookup(%v) = %v, %v", tu, ok, err)
	}
	return s.Packets
}
