//go:build linux

package conntrack

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/fastpath-wrt/fastpath/src/nlframe"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// ctnetlink numbers a dump request uses (uapi/linux/netfilter/
// nfnetlink_conntrack.h; the CTA_FILTER flags are from the kernel's
// nf_internals.h, part of the ABI).
const (
	ipctnlMsgCTGet      = 1
	ctaFilter           = 25
	ctaStatusMask       = 26
	ctaFilterOrigFlags  = 1
	ctaFilterReplyFlags = 2
	ctaFilterFIPSrc     = 1 << 0
	ctaFilterFIPDst     = 1 << 1
	ctaFilterFProtoNum  = 1 << 3
)

// message is the dump request of, for an IPv4 TCP query of offloaded
// entries,
//
//	conntrack -L -f ipv4 -p tcp --status OFFLOAD   (the status filter as CTA_STATUS + CTA_STATUS_MASK)
func (q dumpQuery) message() netlink.Message {
	ae := netlink.NewAttributeEncoder()
	ae.ByteOrder = binary.BigEndian
	if q.statusMask != 0 {
		ae.Uint32(ctaStatus, q.statusValue)
		ae.Uint32(ctaStatusMask, q.statusMask)
	}
	if q.hasProto || q.hasAddr {
		// One direction's tuple carries what is compared: the protocol
		// (the same both ways) and the address of the end addrSlot names.
		tuple, flagsType := uint16(ctaTupleOrig), uint16(ctaFilterOrigFlags)
		if q.addrSlot >= 2 {
			tuple, flagsType = ctaTupleReply, ctaFilterReplyFlags
		}
		var flags uint32
		ae.Nested(tuple, func(ae *netlink.AttributeEncoder) error {
			if q.hasAddr {
				ae.Nested(ctaTupleIP, func(ae *netlink.AttributeEncoder) error {
					src, dst := uint16(ctaIPv4Src), uint16(ctaIPv4Dst)
					if q.addr.Is6() {
						src, dst = ctaIPv6Src, ctaIPv6Dst
					}
					if q.addrSlot%2 == 0 {
						ae.Bytes(src, q.addr.AsSlice())
						flags |= ctaFilterFIPSrc
					} else {
						ae.Bytes(dst, q.addr.AsSlice())
						flags |= ctaFilterFIPDst
					}
					return nil
				})
			}
			if q.hasProto {
				ae.Nested(ctaTupleProto, func(ae *netlink.AttributeEncoder) error {
					ae.Uint8(ctaProtoNum, q.proto)
					return nil
				})
				flags |= ctaFilterFProtoNum
			}
			return nil
		})
		ae.Nested(ctaFilter, func(ae *netlink.AttributeEncoder) error {
			// NLA_U32 in host order, unlike the big-endian CTA_ values.
			ae.ByteOrder = binary.NativeEndian
			ae.Uint32(flagsType, flags)
			return nil
		})
	}
	attrs, _ := ae.Encode() // fixed-size attributes: cannot fail
	return netlink.Message{
		Header: netlink.Header{
			Type:  netlink.HeaderType(nfnlSubsysCTNetlink<<8 | ipctnlMsgCTGet),
			Flags: netlink.Request | netlink.Dump,
		},
		Data: append([]byte{q.family, 0, 0, 0}, attrs...), // nfgenmsg
	}
}

// walk dumps the table as q asks and calls fn with each entry's family
// and attributes, which are valid only during the call. Once fn returns
// false the dump is abandoned: the kernel encodes none of the rest. A
// kernel that refuses q's filter attributes (EINVAL, EOPNOTSUPP: built
// without a feature) is asked again with only the family: callers check
// every entry themselves anyway.
func (c *Client) walk(q dumpQuery, fn func(family uint8, attrs []byte) bool) (TupleDump, error) {
	c.dumpMu.Lock()
	defer c.dumpMu.Unlock()
	d, err := c.walkLocked(q, fn)
	if err != nil && (q.statusMask != 0 || q.hasProto || q.hasAddr) && (errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP)) && d.Entries == 0 {
		d, err = c.walkLocked(dumpQuery{family: q.family}, fn)
	}
	return d, err
}

func (c *Client) walkLocked(q dumpQuery, fn func(family uint8, attrs []byte) bool) (d TupleDump, err error) {
	if c.dumpConn == nil {
		if err := c.redialDump(); err != nil {
			return d, err
		}
	}
	sent, err := c.dumpConn.Send(q.message())
	if err != nil {
		return d, fmt.Errorf("dump conntrack table: send request: %w", err)
	}
	defer func() {
		if err != nil { // what is left of the dump must not reach the next one
			c.redialDump()
		}
	}()
	wanted := true
	for wanted {
		n, err := readDatagram(c.dumpConn, c.dumpBuf, unix.MSG_TRUNC)
		if err != nil {
			return d, fmt.Errorf("dump conntrack table: read: %w", err)
		}
		if n > len(c.dumpBuf) {
			return d, fmt.Errorf("dump conntrack table: a %d-byte message does not fit the %d-byte buffer", n, len(c.dumpBuf))
		}
		done, err := eachMessage(c.dumpBuf[:n], sent.Header.Sequence, &d, func(family uint8, attrs []byte) {
			if wanted {
				wanted = fn(family, attrs)
			}
		})
		if err != nil {
			return d, fmt.Errorf("dump conntrack table: %w", err)
		}
		if done {
			return d, nil
		}
	}
	return d, c.redialDump()
}

// eachMessage walks the netlink messages of one read of a dump. It reports
// done at NLMSG_DONE and the kernel's error for the request as an error;
// a conntrack message too short for its nfgenmsg header is skipped in d.
func eachMessage(buf []byte, seq uint32, d *TupleDump, fn func(family uint8, attrs []byte)) (done bool, err error) {
	return nlframe.Walk(buf, seq, func(_ uint16, body []byte) error {
		d.Entries++
		if len(body) < 4 {
			d.skip(fmt.Errorf("conntrack message of %d bytes lacks its nfgenmsg header", len(body)))
			return nil
		}
		fn(body[0], body[4:])
		return nil
	})
}

func (d *TupleDump) skip(err error) {
	d.Skipped++
	if d.FirstSkip == nil {
		d.FirstSkip = err
	}
}
