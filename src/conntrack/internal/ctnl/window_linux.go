//go:build linux

// Package ctnl sends ctnetlink requests a window at a time and reads their
// acks from the raw socket: the round trips conntrack's batched deletes and
// cttest's batched creates share.
package ctnl

import (
	"encoding/binary"
	"fmt"
	"syscall"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// nfnlSubsysCTNetlink is NFNL_SUBSYS_CTNETLINK, the high byte of every
// conntrack message type.
const nfnlSubsysCTNetlink = 1

// Request is the ctnetlink message msgType (IPCTNL_MSG_CT_*) of family
// with the attributes of ae, asking for an ack.
func Request(msgType uint8, flags netlink.HeaderFlags, family byte, ae *netlink.AttributeEncoder) (netlink.Message, error) {
	attrs, err := ae.Encode()
	if err != nil {
		return netlink.Message{}, err
	}
	return netlink.Message{
		Header: netlink.Header{
			Type:  netlink.HeaderType(nfnlSubsysCTNetlink<<8 | uint16(msgType)),
			Flags: netlink.Request | netlink.Acknowledge | flags,
		},
		Data: append([]byte{family, 0, 0, 0}, attrs...), // nfgenmsg: family, version, res_id
	}, nil
}

// Exchange sends msgs, one window (their acks must fit the socket's
// receive buffer, without copies of the requests: NETLINK_CAP_ACK), and
// reads until every one is acked, calling ack with its index in msgs and
// the kernel's answer (0: done). The acks are read from the raw socket:
// the netlink library stops at the first error message of a read and
// loses the acks after it. buf holds one datagram of acks.
func Exchange(c *netlink.Conn, msgs []netlink.Message, buf []byte, ack func(k int, errno syscall.Errno)) error {
	sent, err := c.SendMessages(msgs)
	if err != nil {
		return err
	}
	pending := make(map[uint32]int, len(sent))
	for k, m := range sent {
		pending[m.Header.Sequence] = k
	}
	for len(pending) > 0 {
		n, err := ReadDatagram(c, buf, 0)
		if err != nil {
			return fmt.Errorf("read acks: %w", err)
		}
		parsed, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return fmt.Errorf("bad ack: %w", err)
		}
		for _, m := range parsed {
			if m.Header.Type != unix.NLMSG_ERROR || len(m.Data) < 4 {
				continue
			}
			k, ok := pending[m.Header.Seq]
			if !ok {
				continue
			}
			delete(pending, m.Header.Seq)
			ack(k, syscall.Errno(-int32(binary.NativeEndian.Uint32(m.Data[:4]))))
		}
	}
	return nil
}

// ReadDatagram reads one datagram of conn into buf, bypassing the netlink
// library's message parsing; recvfrom's flags are passed on (MSG_TRUNC:
// n is the datagram's full length, even when it is longer than buf).
func ReadDatagram(conn *netlink.Conn, buf []byte, flags int) (n int, err error) {
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
