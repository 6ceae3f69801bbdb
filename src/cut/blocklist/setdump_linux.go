//go:build linux

package blocklist

import (
	"fmt"

	"github.com/fastpath-wrt/fastpath/src/nlframe"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// dumpBufSize is the receive buffer of a set's element dump. The kernel
// sizes each part of a dump after the largest read the socket has seen,
// up to 32 KiB, and walks an interval set (an rbtree) from its first
// element again for every part: read a page at a time, as the netlink
// library does, a 95,000-element set took 950 parts and 5-8 s of kernel
// time; read 64 KiB at a time, 120 parts and under 1 s.
const dumpBufSize = 64 << 10

// dumpSetElements reads every element of a set (nft list set) through
// conn, in the network namespace conn was opened in, each key a copy.
func dumpSetElements(conn *netlink.Conn, family uint8, table, set string) ([]rawElem, error) {
	var els []rawElem
	err := walkSetElements(conn, family, table, set, func(el rawElem) {
		el.Key, el.KeyEnd = append([]byte(nil), el.Key...), append([]byte(nil), el.KeyEnd...)
		els = append(els, el)
	})
	if err != nil {
		return nil, err
	}
	return els, nil
}

// walkSetElements reads every element of a set as dumpSetElements does,
// handing each to elem as it is read, its keys parts of the read buffer
// (valid during the call): a set of 100,000 elements is folded into its
// list's points without being held as elements first. A dump that failed
// half-way leaves no harm: a later one reads only its own answer.
func walkSetElements(conn *netlink.Conn, family uint8, table, set string, elem func(rawElem)) error {
	ae := netlink.NewAttributeEncoder()
	ae.String(attrElemListTable, table)
	ae.String(attrElemListSet, set)
	attrs, err := ae.Encode()
	if err != nil {
		return err
	}
	sent, err := conn.Send(netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(nfnlSubsysNftables<<8 | nftMsgGetSetElem), Flags: netlink.Request | netlink.Dump},
		Data:   append([]byte{family, 0, 0, 0}, attrs...),
	})
	if err != nil {
		return err
	}
	rc, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	buf := make([]byte, dumpBufSize)
	for {
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, _, rerr = unix.Recvfrom(int(fd), buf, unix.MSG_TRUNC)
			return rerr != unix.EAGAIN
		}); err != nil {
			return err
		}
		if rerr != nil {
			return rerr
		}
		if n > len(buf) {
			return fmt.Errorf("a %d-byte netlink message does not fit the %d-byte buffer", n, len(buf))
		}
		done, err := nlframe.Walk(buf[:n], sent.Header.Sequence, func(typ uint16, body []byte) error {
			var ev setEvent
			return decodeSetEvent(typ, body, &ev, elem)
		})
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}
