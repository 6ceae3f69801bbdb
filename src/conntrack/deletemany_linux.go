//go:build linux

package conntrack

import (
	"encoding/binary"
	"fmt"
	"syscall"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// ctnetlink numbers (uapi/linux/netfilter/nfnetlink_conntrack.h).
const (
	nfnlSubsysCTNetlink = 1
	ipctnlMsgCTDelete   = 2
	ctaTupleOrig        = 1
	ctaTupleIP          = 1
	ctaTupleProto       = 2
	ctaIPv4Src          = 1
	ctaIPv4Dst          = 2
	ctaIPv6Src          = 3
	ctaIPv6Dst          = 4
	ctaProtoNum         = 1
	ctaProtoSrcPort     = 2
	ctaProtoDstPort     = 3
)

// deleteWindow is how many deletes are in flight at once: enough to fill
// a round trip, few enough that their acks fit the socket buffer.
const deleteWindow = 128

// DeleteMany deletes entries by their original tuples, many per round
// trip, and returns one error per flow (nil: deleted), mapped like Delete.
// Cutting a thousand connections at once is a single-digit number of
// round trips instead of a thousand.
func (c *Client) DeleteMany(flows []netstate.Flow) []error {
	errs := make([]error, len(flows))
	var msgs []netlink.Message
	var idx []int
	for i, f := range flows {
		m, err := deleteMessage(f)
		if err != nil {
			errs[i] = fmt.Errorf("delete conntrack entry: %w", err)
			continue
		}
		msgs = append(msgs, m)
		idx = append(idx, i)
	}
	for lo := 0; lo < len(msgs); lo += deleteWindow {
		hi := min(lo+deleteWindow, len(msgs))
		if err := c.deleteWindow(msgs[lo:hi], idx[lo:hi], flows, errs); err != nil {
			for _, i := range idx[lo:] {
				if errs[i] == nil {
					errs[i] = err
				}
			}
			return errs
		}
	}
	return errs
}

// deleteWindow sends one window of deletes and reads their acks. The acks
// are read from the raw socket: the netlink library stops at the first
// error message of a read and loses the acks after it.
func (c *Client) deleteWindow(msgs []netlink.Message, idx []int, flows []netstate.Flow, errs []error) error {
	sent, err := c.raw.SendMessages(msgs)
	if err != nil {
		return fmt.Errorf("delete conntrack entries: %w", err)
	}
	bySeq := make(map[uint32]int, len(sent))
	for k, m := range sent {
		bySeq[m.Header.Sequence] = idx[k]
	}
	buf := make([]byte, 64*1024)
	for len(bySeq) > 0 {
		n, err := readDatagram(c.raw, buf, 0)
		if err != nil {
			return fmt.Errorf("delete conntrack entries: read acks: %w", err)
		}
		parsed, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return fmt.Errorf("delete conntrack entries: bad ack: %w", err)
		}
		for _, m := range parsed {
			if m.Header.Type != unix.NLMSG_ERROR || len(m.Data) < 4 {
				continue
			}
			i, ok := bySeq[m.Header.Seq]
			if !ok {
				continue
			}
			delete(bySeq, m.Header.Seq)
			if code := int32(binary.NativeEndian.Uint32(m.Data[:4])); code != 0 {
				errs[i] = mapDeleteError(syscall.Errno(-code), "conntrack entry "+flows[i].Original.String())
			}
		}
	}
	return nil
}

// readDatagram reads one datagram of conn into buf, bypassing the netlink
// library's message parsing; recvfrom's flags are passed on (MSG_TRUNC:
// n is the datagram's full length, even when it is longer than buf).
func readDatagram(conn *netlink.Conn, buf []byte, flags int) (n int, err error) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return 0, err
	}
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr = unix.Recvfrom(int(fd), buf, flags)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	return n, err
}

// deleteMessage is the ctnetlink request of
//
//	conntrack -D -p udp -s 10.90.1.2 -d 10.90.2.2 --sport 40000 --dport 9000
func deleteMessage(f netstate.Flow) (netlink.Message, error) {
	t, err := kernelTuple(f.Original)
	if err != nil {
		return netlink.Message{}, err
	}
	family, srcType, dstType := byte(unix.AF_INET), uint16(ctaIPv4Src), uint16(ctaIPv4Dst)
	if !t.IP.SourceAddress.Unmap().Is4() {
		family, srcType, dstType = unix.AF_INET6, ctaIPv6Src, ctaIPv6Dst
	}
	ae := netlink.NewAttributeEncoder()
	ae.ByteOrder = binary.BigEndian
	ae.Nested(ctaTupleOrig, func(ae *netlink.AttributeEncoder) error {
		ae.Nested(ctaTupleIP, func(ae *netlink.AttributeEncoder) error {
			ae.Bytes(srcType, t.IP.SourceAddress.Unmap().AsSlice())
			ae.Bytes(dstType, t.IP.DestinationAddress.Unmap().AsSlice())
			return nil
		})
		ae.Nested(ctaTupleProto, func(ae *netlink.AttributeEncoder) error {
			ae.Uint8(ctaProtoNum, t.Proto.Protocol)
			ae.Uint16(ctaProtoSrcPort, t.Proto.SourcePort)
			ae.Uint16(ctaProtoDstPort, t.Proto.DestinationPort)
			return nil
		})
		return nil
	})
	attrs, err := ae.Encode()
	if err != nil {
		return netlink.Message{}, err
	}
	return netlink.Message{
		Header: netlink.Header{
			Type:  netlink.HeaderType(nfnlSubsysCTNetlink<<8 | ipctnlMsgCTDelete),
			Flags: netlink.Request | netlink.Acknowledge,
		},
		Data: append([]byte{family, 0, 0, 0}, attrs...), // nfgenmsg: family, version, res_id
	}, nil
}
