// Command pppoesession stands in for pppd at one end of a PPPoE session in
// the lab VM, which has no pppd: it opens a kernel PPPoE session (an
// AF_PPPOX socket connected to the peer's MAC address and a session id on
// an Ethernet or VLAN device), attaches its channel to a new ppp unit,
// prints the unit's device name and holds the session until it is killed.
// Both ends are set up alike, so no LCP or IPCP is spoken: the kernel
// passes IPv4 and IPv6 on a unit whose network-protocol modes are "pass",
// and the caller gives the device its name and addresses with ip(8).
//
//	pppoesession DEVICE PEER-MAC SESSION-ID
package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// From linux/if_pppox.h and linux/ppp_defs.h.
const (
	pxProtoOE  = 0
	pppIP      = 0x21
	pppIPv6    = 0x57
	npmodePass = 0
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: pppoesession DEVICE PEER-MAC SESSION-ID")
		os.Exit(2)
	}
	unit, err := session(os.Args[1], os.Args[2], os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, "pppoesession:", err)
		os.Exit(1)
	}
	fmt.Printf("ppp%d\n", unit)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}

// session opens the session and returns the ppp unit's number; the file
// descriptors stay open (closing them would end the session).
func session(dev, peer, sid string) (int, error) {
	mac, err := net.ParseMAC(peer)
	if err != nil || len(mac) != 6 {
		return 0, fmt.Errorf("peer MAC %q: want six bytes as aa:bb:cc:dd:ee:ff", peer)
	}
	id, err := strconv.ParseUint(sid, 10, 16)
	if err != nil || id == 0 || id == 0xffff {
		return 0, fmt.Errorf("session id %q: want 1 to 65534", sid)
	}
	if len(dev) >= unix.IFNAMSIZ {
		return 0, fmt.Errorf("device name %q is too long", dev)
	}
	sock, err := unix.Socket(unix.AF_PPPOX, unix.SOCK_STREAM, pxProtoOE)
	if err != nil {
		return 0, fmt.Errorf("AF_PPPOX socket (is the pppoe module loaded?): %w", err)
	}
	// struct sockaddr_pppox (packed): sa_family u16, sa_protocol u32,
	// then struct pppoe_addr: sid (network order), remote[6], dev[16].
	var sa [2 + 4 + 2 + 6 + unix.IFNAMSIZ]byte
	binary.NativeEndian.PutUint16(sa[0:], unix.AF_PPPOX)
	binary.NativeEndian.PutUint32(sa[2:], pxProtoOE)
	binary.BigEndian.PutUint16(sa[6:], uint16(id))
	copy(sa[8:], mac)
	copy(sa[14:], dev)
	if _, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(unsafe.Pointer(&sa[0])), uintptr(len(sa))); e != 0 {
		return 0, fmt.Errorf("connecting the PPPoE session on %s to %s, id %d: %w", dev, mac, id, e)
	}
	var chanIdx int32
	if err := ioctlPtr(sock, unix.PPPIOCGCHAN, unsafe.Pointer(&chanIdx)); err != nil {
		return 0, fmt.Errorf("PPPIOCGCHAN: %w", err)
	}
	ch, err := unix.Open("/dev/ppp", unix.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("/dev/ppp (ppp_generic): %w", err)
	}
	if err := ioctlPtr(ch, unix.PPPIOCATTCHAN, unsafe.Pointer(&chanIdx)); err != nil {
		return 0, fmt.Errorf("PPPIOCATTCHAN: %w", err)
	}
	u, err := unix.Open("/dev/ppp", unix.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("/dev/ppp: %w", err)
	}
	unit := int32(-1)
	if err := ioctlPtr(u, unix.PPPIOCNEWUNIT, unsafe.Pointer(&unit)); err != nil {
		return 0, fmt.Errorf("PPPIOCNEWUNIT: %w", err)
	}
	if err := ioctlPtr(ch, unix.PPPIOCCONNECT, unsafe.Pointer(&unit)); err != nil {
		return 0, fmt.Errorf("PPPIOCCONNECT: %w", err)
	}
	for _, proto := range []int32{pppIP, pppIPv6} {
		np := [2]int32{proto, npmodePass} // struct npioctl
		if err := ioctlPtr(u, unix.PPPIOCSNPMODE, unsafe.Pointer(&np)); err != nil {
			return 0, fmt.Errorf("PPPIOCSNPMODE: %w", err)
		}
	}
	return int(unit), nil
}

func ioctlPtr(fd int, req uint, p unsafe.Pointer) error {
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(p)); e != 0 {
		return e
	}
	return nil
}
