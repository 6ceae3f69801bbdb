//go:build linux && !mips

package xdp

import (
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
)

// hang bounds every wait of these tests: a wait ends on its condition, and
// only a hung kernel or test reaches the bound.
const hang = 60 * time.Second

// rig is labnet's client - router - server namespaces with the backend
// attached to the router's lan0 and wan0, raw packet sockets sending
// crafted frames from the client and the server, and taps on the router's
// devices counting what reaches its stack.
type rig struct {
	lab            *labnet.Lab
	b              *Backend
	netns          int
	client, server *sender
	lanTap, wanTap *tap
}

func needRoot(t *testing.T) {
	t.Helper()
	if m := labnet.Missing(); m != "" {
		t.Skipf("needs %s (TestIntegration* run as root)", m)
	}
}

// routerLab builds labnet's topology (masquerading with nat) and opens the
// router's namespace; both go at the test's end.
func routerLab(t *testing.T, prefix string, nat bool) (*labnet.Lab, int) {
	t.Helper()
	needRoot(t)
	lab, err := labnet.New(prefix, nat)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lab.Close)
	netns, err := unix.Open("/run/netns/"+lab.Router, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(netns) })
	return lab, netns
}

func newRig(t *testing.T) *rig {
	t.Helper()
	lab, netns := routerLab(t, "xdp", false)
	r := &rig{lab: lab, netns: netns}
	lanMAC, wanMAC := mac(t, lab.Router, "lan0"), mac(t, lab.Router, "wan0")
	r.client = newSender(t, lab.Client, "c0", lanMAC)
	r.server = newSender(t, lab.Server, "s0", wanMAC)
	r.lanTap = newTap(t, lab.Router, "lan0")
	r.wanTap = newTap(t, lab.Router, "wan0")
	return r
}

// open opens a backend in the router's namespace and attaches it to both
// devices, failing unless native XDP runs on them.
func (r *rig) open(t *testing.T) *Backend {
	t.Helper()
	b, err := Open(Options{Veth: true, MaxEntries: 4096, NetNS: r.netns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	for _, dev := range []string{"lan0", "wan0"} {
		if d := b.Attach(dev); !d.XDP {
			t.Fatalf("Attach(%s) = %+v, want native XDP on a veth", dev, d)
		}
	}
	r.b = b
	return b
}

func mac(t *testing.T, ns, dev string) (m [6]byte) {
	t.Helper()
	err := labnet.In(ns, func() error {
		i, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		copy(m[:], i.HardwareAddr)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func packetSocket(ns, dev string, proto uint16) (fd, index int, err error) {
	err = labnet.In(ns, func() error {
		i, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		index = i.Index
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(proto)))
		if err != nil {
			return err
		}
		return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(proto), Ifindex: index})
	})
	return
}

// marker opens the payload of every test frame; the byte after it is the
// flow's id, then a sequence number.
const marker = "FPXDP-"

func payload(id byte, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(marker), id), seq)
}

// tap counts the test frames that reach the stack of a device, per flow id,
// and remembers the highest sequence number of each.
type tap struct {
	fd     int
	counts [256]atomic.Uint64
	seqs   [256]atomic.Uint64
	stop   atomic.Bool
	done   chan struct{}
}

func newTap(t *testing.T, ns, dev string) *tap {
	t.Helper()
	fd, _, err := packetSocket(ns, dev, unix.ETH_P_ALL)
	if err != nil {
		t.Fatalf("tap on %s: %v", dev, err)
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 100000})
	tp := &tap{fd: fd, done: make(chan struct{})}
	go tp.read()
	t.Cleanup(func() { tp.stop.Store(true); <-tp.done; unix.Close(fd) })
	return tp
}

func (tp *tap) read() {
	defer close(tp.done)
	buf := make([]byte, 2048)
	for !tp.stop.Load() {
		n, from, err := unix.Recvfrom(tp.fd, buf, 0)
		if err != nil {
			continue // the receive timeout lets stop be seen
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		f := buf[:n]
		for i := 0; i+len(marker)+9 <= len(f); i++ {
			if string(f[i:i+len(marker)]) != marker {
				continue
			}
			id := f[i+len(marker)]
			tp.counts[id].Add(1)
			seq := binary.BigEndian.Uint64(f[i+len(marker)+1:])
			for old := tp.seqs[id].Load(); seq > old && !tp.seqs[id].CompareAndSwap(old, seq); old = tp.seqs[id].Load() {
			}
			break
		}
	}
}

func (tp *tap) count(id byte) uint64 { return tp.counts[id].Load() }

// sender writes crafted frames out of a device.
type sender struct {
	fd     int
	index  int
	dstMAC [6]byte
	srcMAC [6]byte
	mu     sync.Mutex
	seq    uint64
}

func newSender(t *testing.T, ns, dev string, dstMAC [6]byte) *sender {
	t.Helper()
	fd, index, err := packetSocket(ns, dev, 0) // protocol 0: sends only
	if err != nil {
		t.Fatalf("sender on %s: %v", dev, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return &sender{fd: fd, index: index, dstMAC: dstMAC, srcMAC: mac(t, ns, dev)}
}

func (s *sender) frame(spec frameSpec, id byte) ([]byte, uint64) {
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	spec.dstMAC, spec.srcMAC = s.dstMAC, s.srcMAC
	spec.payload = payload(id, seq)
	return spec.frame(), seq
}

func (s *sender) send(f []byte) error {
	err := unix.Sendto(s.fd, f, 0, &unix.SockaddrLinklayer{Ifindex: s.index, Halen: 6})
	if err == unix.ENOBUFS || err == unix.EAGAIN {
		return nil // a full queue drops a frame of the flood, as a wire would
	}
	return err
}

// flood sends frames of spec with flow id as fast as it can until stopped.
type flood struct {
	sent atomic.Uint64
	stop atomic.Bool
	done chan error
}

func startFlood(t *testing.T, s *sender, spec frameSpec, id byte) *flood {
	t.Helper()
	fl := &flood{done: make(chan error, 1)}
	go func() {
		for !fl.stop.Load() {
			f, _ := s.frame(spec, id)
			if err := s.send(f); err != nil {
				fl.done <- err
				return
			}
			fl.sent.Add(1)
		}
		fl.done <- nil
	}()
	t.Cleanup(func() { fl.halt(t) })
	return fl
}

func (fl *flood) halt(t *testing.T) {
	if fl.stop.Swap(true) {
		return
	}
	if err := <-fl.done; err != nil {
		t.Errorf("flood: %v", err)
	}
}

// waitFor polls cond until it holds; only a hang reaches the bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after %v", what, hang)
		}
		time.Sleep(time.Millisecond)
	}
}

// barrierID is the flow id of barrier frames: a tuple never cut, sent
// after the fact to observe. Frames of one device are handled in order,
// so once the tap has seen a barrier it has seen every frame the driver
// passed before it.
const barrierID = 200

func barrier(t *testing.T, s *sender, tp *tap, spec frameSpec) {
	t.Helper()
	f, seq := s.frame(spec, barrierID)
	last := time.Time{}
	waitFor(t, "a barrier frame at the tap", func() bool {
		if tp.seqs[barrierID].Load() >= seq {
			return true
		}
		if time.Since(last) > 50*time.Millisecond { // resend: a tap may drop a frame under a flood
			if err := s.send(f); err != nil {
				t.Fatal(err)
			}
			last = time.Now()
		}
		return false
	})
}
