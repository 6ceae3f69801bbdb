//go:build linux

// Command xdpdrop measures what a cut costs the receiving side on a real
// driver: it sends a fixed number of UDP frames of one 5-tuple out of one
// device into another (the lab's two virtio-net NICs on a qemu hub) and
// reports how many reached the stack and the softirq time spent, with no
// cut, with the netdev ingress cut (an nft drop at priority -500, as
// table netdev fastpath_cut does) or with the XDP cut (package cut/xdp):
//
//	xdpdrop -tx eth0 -rx eth1 -mode off|netdev|xdp [-frames N]
//
// Frames to the stack are counted by an nft netdev ingress chain at
// priority 10 on the receiving device, after the cut's chain, like the
// lab's cut rows. Softirq and system time come from /proc/stat over the
// whole run (both vCPUs). Only for the lab: it changes nft state and
// device XDP programs and cleans both up.
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/cut/xdp"
	"golang.org/x/sys/unix"
)

var tuple = cut.Tuple{Proto: "udp", Src: "10.99.0.1", Dst: "10.99.0.9", SrcPort: 40000, DstPort: 5001}

func main() {
	tx := flag.String("tx", "eth0", "sending device")
	rx := flag.String("rx", "eth1", "receiving device (the cut runs here)")
	mode := flag.String("mode", "off", "off, netdev or xdp")
	frames := flag.Int("frames", 200000, "frames to send (1 to 10000000)")
	flag.Parse()
	if *frames < 1 || *frames > 10_000_000 {
		fail(fmt.Errorf("-frames %d: want 1 to 10000000", *frames))
	}
	if err := run(*tx, *rx, *mode, *frames); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "xdpdrop:", err)
	os.Exit(1)
}

func nft(script string) error {
	cmd := exec.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft: %v: %s", err, out)
	}
	return nil
}

func run(txDev, rxDev, mode string, frames int) error {
	rxIf, err := net.InterfaceByName(rxDev)
	if err != nil {
		return err
	}
	txIf, err := net.InterfaceByName(txDev)
	if err != nil {
		return err
	}
	counter := fmt.Sprintf("table netdev xdpdrop_count {\n\tchain c {\n\t\ttype filter hook ingress device %q priority 10; policy accept;\n\t\tudp dport %d counter\n\t}\n}\n", rxDev, tuple.DstPort)
	_ = nft("delete table netdev xdpdrop_count\n")
	_ = nft("delete table netdev xdpdrop_cut\n")
	if err := nft(counter); err != nil {
		return err
	}
	defer nft("delete table netdev xdpdrop_count\n")
	backend := "none"
	switch mode {
	case "off":
	case "netdev":
		cutRule := fmt.Sprintf("table netdev xdpdrop_cut {\n\tchain c {\n\t\ttype filter hook ingress device %q priority -500; policy accept;\n\t\tip saddr %s ip daddr %s udp sport %d udp dport %d drop\n\t}\n}\n",
			rxDev, tuple.Src, tuple.Dst, tuple.SrcPort, tuple.DstPort)
		if err := nft(cutRule); err != nil {
			return err
		}
		defer nft("delete table netdev xdpdrop_cut\n")
		backend = "netdev ingress"
	case "xdp":
		b, err := xdp.Open(xdp.Options{MaxEntries: 1024})
		if err != nil {
			return err
		}
		defer b.Close()
		d := b.Attach(rxDev)
		if !d.XDP {
			return fmt.Errorf("no XDP on %s: %s", rxDev, d.Reason)
		}
		if err := b.Cut([]cut.Tuple{tuple, tuple.Reverse()}); err != nil {
			return err
		}
		backend = d.Reason
	default:
		return fmt.Errorf("-mode %q: use off, netdev or xdp", mode)
	}

	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	frame := udpFrame(rxIf.HardwareAddr, txIf.HardwareAddr, 64)
	to := &unix.SockaddrLinklayer{Ifindex: txIf.Index, Halen: 6}

	before, err := cpuTicks()
	if err != nil {
		return err
	}
	start := time.Now()
	sent := 0
	for sent < frames {
		if err := unix.Sendto(fd, frame, 0, to); err == unix.ENOBUFS || err == unix.EAGAIN {
			continue
		} else if err != nil {
			return err
		}
		sent++
	}
	// Let the receiving side finish: the frames in the NIC's ring still
	// cost softirq time.
	time.Sleep(500 * time.Millisecond)
	elapsed := time.Since(start)
	after, err := cpuTicks()
	if err != nil {
		return err
	}
	stack, err := counted()
	if err != nil {
		return err
	}
	hz := 100.0 // USER_HZ: /proc/stat counts in 1/100 s on Linux
	soft := float64(after.softirq-before.softirq) / hz
	sys := float64(after.system-before.system) / hz
	fmt.Printf("mode=%s backend=%q frames_sent=%d frames_to_stack=%d seconds=%.2f softirq_s=%.2f system_s=%.2f softirq_us_per_kframe=%.0f\n",
		mode, backend, sent, stack, elapsed.Seconds(), soft, sys, soft*1e9/float64(sent))
	return nil
}

type ticks struct{ system, softirq uint64 }

func cpuTicks() (ticks, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return ticks{}, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line)) // cpu user nice system idle iowait irq softirq ...
	if len(f) < 8 || f[0] != "cpu" {
		return ticks{}, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	sys, _ := strconv.ParseUint(f[3], 10, 64)
	soft, _ := strconv.ParseUint(f[7], 10, 64)
	return ticks{system: sys, softirq: soft}, nil
}

// counted reads the packets of the counter chain's rule.
func counted() (uint64, error) {
	out, err := exec.Command("nft", "list", "chain", "netdev", "xdpdrop_count", "c").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("nft list: %v: %s", err, out)
	}
	s := string(out)
	i := strings.Index(s, "counter packets ")
	if i < 0 {
		return 0, fmt.Errorf("no counter in %q", s)
	}
	f := strings.Fields(s[i+len("counter packets "):])
	return strconv.ParseUint(f[0], 10, 64)
}

// udpFrame is an Ethernet/IPv4/UDP frame of tuple with a payload of size
// bytes; checksums are left zero (UDP allows it, IPv4 does not, which the
// frame never needs: it is counted at ingress and dropped by routing).
func udpFrame(dst, src net.HardwareAddr, size int) []byte {
	s, d := netip.MustParseAddr(tuple.Src).As4(), netip.MustParseAddr(tuple.Dst).As4()
	f := append(append([]byte{}, dst...), src...)
	f = binary.BigEndian.AppendUint16(f, 0x0800)
	ip := make([]byte, 20)
	ip[0], ip[8], ip[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(ip[2:], uint16(20+8+size))
	copy(ip[12:], s[:])
	copy(ip[16:], d[:])
	f = append(f, ip...)
	f = binary.BigEndian.AppendUint16(f, tuple.SrcPort)
	f = binary.BigEndian.AppendUint16(f, tuple.DstPort)
	f = binary.BigEndian.AppendUint16(f, uint16(8+size))
	f = append(f, 0, 0)
	return append(f, make([]byte, size)...)
}
