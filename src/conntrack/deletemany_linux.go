//go:build linux

package conntrack

import (
	"encoding/binary"
	"fmt"
	"syscall"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/conntrack/internal/ctnl"
	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// ctnetlink numbers (uapi/linux/netfilter/nfnetlink_conntrack.h).
const (
	nfnlSubsysCTNetlink = 1
	ipctnlMsgCTNew      = 0
	ipctnlMsgCTDelete   = 2
	ipctnlMsgCTGetStats = 5
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

// Event groups (NFNLGRP_CONNTRACK_*, uapi/linux/netfilter/nfnetlink.h) and
// the counter's attribute (CTA_STATS_GLOBAL_ENTRIES).
const (
	nfnlgrpCTNew          = 1
	nfnlgrpCTDestroy      = 3
	ctaStatsGlobalEntries = 1
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
	buf := make([]byte, 64*1024)
	for lo := 0; lo < len(msgs); lo += deleteWindow {
		hi := min(lo+deleteWindow, len(msgs))
		err := ctnl.Exchange(c.raw, msgs[lo:hi], buf, func(k int, errno syscall.Errno) {
			if i := idx[lo+k]; errno != 0 {
				errs[i] = mapDeleteError(errno, "conntrack entry "+flows[i].Original.String())
			}
		})
		if err != nil {
			err = fmt.Errorf("delete conntrack entries: %w", err)
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

// readDatagram reads one datagram, bypassing the netlink library's parsing.
var readDatagram = ctnl.ReadDatagram

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
	return ctnl.Request(ipctnlMsgCTDelete, 0, family, ae)
}
