//go:build linux

// Package cttest fills the current network namespace's conntrack table with
// synthetic entries over ctnetlink, many per round trip, for the tests and
// benchmarks that need a router-sized table.
package cttest

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"
	"syscall"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/conntrack/internal/ctnl"
)

// Entry is one connection to create: its original tuple and the address
// and port its reply goes back to (a masqueraded entry's differ from the
// original source).
type Entry struct {
	Proto            uint8 // 6 tcp, 17 udp, 1 icmp, 58 icmpv6
	Src, Dst         netip.Addr
	SrcPort, DstPort uint16 // the echo id for ICMP
	ReplyDst         netip.Addr
	ReplyDstPort     uint16
	Established      bool   // TCP: ESTABLISHED and ASSURED, as a long-lived connection
	Timeout          uint32 // seconds
	Mark             uint32
}

// Mix is the i-th entry (i < 65,536) of a home router's table as the
// benchmarks model it: 60 % TCP (established), 35 % UDP, 5 % ICMP; one in
// eight IPv6; every IPv4 entry masqueraded to the router's WAN address
// 192.0.2.1, as on an OpenWrt router; one in sixteen with a mark.
func Mix(i int) Entry {
	e := Entry{Timeout: 3600, SrcPort: uint16(1024 + i%60000), DstPort: 443}
	switch r := i % 20; {
	case r < 12:
		e.Proto, e.Established = 6, true
	case r < 19:
		e.Proto, e.DstPort = 17, 53
	default:
		e.Proto, e.DstPort = 1, 0
	}
	if i%8 == 7 {
		e.Src = netip.AddrFrom16([16]byte{0xfd, 0, 0x91, 1, 10: byte(i >> 24), 11: byte(i >> 16), 14: byte(i >> 8), 15: byte(i)})
		e.Dst = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, byte(i % 251), 15: 7})
		e.ReplyDst = e.Src
		if e.Proto == 1 {
			e.Proto = 58
		}
	} else {
		e.Src = netip.AddrFrom4([4]byte{10, 91, byte(i >> 8), byte(i)})
		e.Dst = netip.AddrFrom4([4]byte{198, 51, byte(100 + i%3), byte(i % 251)})
		e.ReplyDst = netip.AddrFrom4([4]byte{192, 0, 2, 1})
	}
	if i%16 == 3 {
		e.Mark = uint32(0x100 + i%7)
	}
	// The reply port of a masqueraded connection is the router's: unique
	// per entry, so no two replies collide.
	e.ReplyDstPort = uint16(i)
	if e.ReplyDst == e.Src {
		e.ReplyDstPort = e.SrcPort
	}
	if e.Proto == 1 || e.Proto == 58 {
		e.SrcPort = uint16(i) // the echo id keeps ICMP entries apart
	}
	return e
}

// window is how many creates are in flight at once: their acks must fit
// the socket's receive buffer.
const window = 128

// Inject creates n entries, entry(0) .. entry(n-1), in the current network
// namespace's table. It stops at the first the kernel refuses.
func Inject(n int, entry func(int) Entry) error {
	c, err := netlink.Dial(unix.NETLINK_NETFILTER, nil)
	if err != nil {
		return fmt.Errorf("open ctnetlink (is nf_conntrack_netlink loaded?): %w", err)
	}
	defer c.Close()
	// Acks without the request in them, and room for a window of them
	// (a 6.12 VM's default buffer overflowed: ENOBUFS).
	_ = c.SetOption(netlink.CapAcknowledge, true)
	_ = c.SetReadBuffer(1 << 20)
	buf := make([]byte, 64<<10)
	for lo := 0; lo < n; lo += window {
		hi := min(lo+window, n)
		msgs := make([]netlink.Message, 0, hi-lo)
		for i := lo; i < hi; i++ {
			m, err := createMessage(entry(i))
			if err != nil {
				return fmt.Errorf("entry %d: %w", i, err)
			}
			msgs = append(msgs, m)
		}
		var refused error
		err := ctnl.Exchange(c, msgs, buf, func(k int, errno syscall.Errno) {
			if errno != 0 && refused == nil {
				refused = fmt.Errorf("create entry %d (%+v): %w", lo+k, entry(lo+k), errno)
			}
		})
		if err != nil {
			return fmt.Errorf("create entries: %w", err)
		}
		if refused != nil {
			return refused
		}
	}
	return nil
}

// ctnetlink numbers (uapi/linux/netfilter/nfnetlink_conntrack.h).
const (
	ctaTupleOrig, ctaTupleReply, ctaStatus, ctaProtoInfo, ctaTimeout = 1, 2, 3, 4, 7
	ctaMark                                                          = 8
	ctaTupleIP, ctaTupleProto                                        = 1, 2
	ctaIPv4Src, ctaIPv4Dst, ctaIPv6Src, ctaIPv6Dst                   = 1, 2, 3, 4
	ctaProtoNum, ctaProtoSrcPort, ctaProtoDstPort                    = 1, 2, 3
	ctaProtoICMPID, ctaProtoICMPType, ctaProtoICMPCode               = 4, 5, 6
	ctaProtoICMPv6ID, ctaProtoICMPv6Type, ctaProtoICMPv6Code         = 7, 8, 9
	ctaProtoInfoTCP, ctaProtoInfoTCPState                            = 1, 1
	ipsSeenReply, ipsAssured, ipsConfirmed                           = 1 << 1, 1 << 2, 1 << 3
	tcpEstablished                                                   = 3
	ipctnlMsgCTNew                                                   = 0
)

// createMessage is the ctnetlink request of, for a masqueraded TCP entry,
//
//	conntrack -I -p tcp -s 10.91.0.1 -d 198.51.100.1 --sport 1025 --dport 443 \
//	    --reply-src 198.51.100.1 --reply-dst 192.0.2.1 --reply-port-src 443 --reply-port-dst 1 \
//	    --state ESTABLISHED --status ASSURED,SEEN_REPLY --timeout 3600
func createMessage(e Entry) (netlink.Message, error) {
	if e.Src.Is4() != e.Dst.Is4() || e.Src.Is4() != e.ReplyDst.Is4() {
		return netlink.Message{}, fmt.Errorf("mixes IPv4 and IPv6: %+v", e)
	}
	family, srcType, dstType := byte(unix.AF_INET), uint16(ctaIPv4Src), uint16(ctaIPv4Dst)
	if e.Src.Is6() {
		family, srcType, dstType = unix.AF_INET6, ctaIPv6Src, ctaIPv6Dst
	}
	ae := netlink.NewAttributeEncoder()
	ae.ByteOrder = binary.BigEndian
	tuple := func(typ uint16, src, dst netip.Addr, sport, dport uint16, reply bool) {
		ae.Nested(typ, func(ae *netlink.AttributeEncoder) error {
			ae.Nested(ctaTupleIP, func(ae *netlink.AttributeEncoder) error {
				ae.Bytes(srcType, src.AsSlice())
				ae.Bytes(dstType, dst.AsSlice())
				return nil
			})
			ae.Nested(ctaTupleProto, func(ae *netlink.AttributeEncoder) error {
				ae.Uint8(ctaProtoNum, e.Proto)
				switch e.Proto {
				case 1, 58:
					idType, typType, codeType, echo := uint16(ctaProtoICMPID), uint16(ctaProtoICMPType), uint16(ctaProtoICMPCode), uint8(8)
					if e.Proto == 58 {
						idType, typType, codeType, echo = ctaProtoICMPv6ID, ctaProtoICMPv6Type, ctaProtoICMPv6Code, 128
					}
					if reply {
						echo = map[uint8]uint8{8: 0, 128: 129}[echo]
					}
					ae.Uint16(idType, e.SrcPort)
					ae.Uint8(typType, echo)
					ae.Uint8(codeType, 0)
				default:
					ae.Uint16(ctaProtoSrcPort, sport)
					ae.Uint16(ctaProtoDstPort, dport)
				}
				return nil
			})
			return nil
		})
	}
	tuple(ctaTupleOrig, e.Src, e.Dst, e.SrcPort, e.DstPort, false)
	tuple(ctaTupleReply, e.Dst, e.ReplyDst, e.DstPort, e.ReplyDstPort, true)
	ae.Uint32(ctaTimeout, e.Timeout)
	if e.Mark != 0 {
		ae.Uint32(ctaMark, e.Mark)
	}
	if e.Established && e.Proto == 6 {
		ae.Uint32(ctaStatus, ipsSeenReply|ipsAssured|ipsConfirmed)
		ae.Nested(ctaProtoInfo, func(ae *netlink.AttributeEncoder) error {
			ae.Nested(ctaProtoInfoTCP, func(ae *netlink.AttributeEncoder) error {
				ae.Uint8(ctaProtoInfoTCPState, tcpEstablished)
				return nil
			})
			return nil
		})
	}
	return ctnl.Request(ipctnlMsgCTNew, netlink.Create|netlink.Excl, family, ae)
}

// Dumper dumps the table of the network namespace it was opened in, for
// the benchmarks that need what a count of every entry costs: on a
// kernel without flowtables no entry is offloaded, so the benchmarks
// stand this in for the dump of a table whose entries all are.
type Dumper struct {
	mu  sync.Mutex // one dump at a time on the socket
	c   *netlink.Conn
	buf []byte
}

// OpenDumper opens a ctnetlink socket in the current network namespace.
func OpenDumper() (*Dumper, error) {
	c, err := netlink.Dial(unix.NETLINK_NETFILTER, nil)
	if err != nil {
		return nil, fmt.Errorf("open ctnetlink (is nf_conntrack_netlink loaded?): %w", err)
	}
	return &Dumper{c: c, buf: make([]byte, 64<<10)}, nil
}

func (d *Dumper) Close() error { return d.c.Close() }

// Entries dumps the whole table and counts its entries, reading nothing
// of them.
func (d *Dumper) Entries() (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	sent, err := d.c.Send(netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(1<<8 | 1), Flags: netlink.Request | netlink.Dump}, // IPCTNL_MSG_CT_GET
		Data:   []byte{unix.AF_UNSPEC, 0, 0, 0},
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		nr, err := ctnl.ReadDatagram(d.c, d.buf, 0)
		if err != nil {
			return n, err
		}
		msgs, err := syscall.ParseNetlinkMessage(d.buf[:nr])
		if err != nil {
			return n, err
		}
		for _, m := range msgs {
			if m.Header.Seq != sent.Header.Sequence {
				continue
			}
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return n, nil
			case unix.NLMSG_ERROR:
				return n, fmt.Errorf("conntrack dump failed")
			}
			n++
		}
	}
}
