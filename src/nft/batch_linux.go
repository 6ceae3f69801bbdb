package nft

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// batch collects the netlink messages of one transaction. google/nftables
// builds most of them; the one it lacks (DELFLOWTABLE naming devices, which
// removes devices and keeps the flowtable) is built here. All go to the
// kernel between one BATCH_BEGIN and BATCH_END: all or nothing.
type batch struct {
	msgs    []netlink.Message
	actions []string // for each message, the action (op) it belongs to
}

// add captures what build queues on a google/nftables Conn instead of
// sending it, so it can join messages of our own in the same batch. The
// library offers no way to add a caller-built message to its batch, so the
// capture goes through its test dial (TestCaptureContract pins the
// version). A Conn method that queues a raw message, or DelFlowtable
// sending NFTA_FLOWTABLE_HOOK with the Flowtable's Devices, would retire
// both this capture and delDevices.
func (b *batch) add(build func(c *nftables.Conn) error) error {
	var captured []netlink.Message
	c, err := nftables.New(nftables.WithTestDial(func(req []netlink.Message) ([]netlink.Message, error) {
		for _, m := range req {
			if t := m.Header.Type; t != unix.NFNL_MSG_BATCH_BEGIN && t != unix.NFNL_MSG_BATCH_END {
				m.Header.Sequence, m.Header.PID = 0, 0 // the real socket numbers them
				captured = append(captured, m)
			}
		}
		return []netlink.Message{{Header: netlink.Header{Type: netlink.Error}, Data: make([]byte, 4)}}, nil
	}))
	if err != nil {
		return err
	}
	if err := build(c); err != nil {
		return err
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("building nftables messages: %w", err)
	}
	b.msgs = append(b.msgs, captured...)
	return nil
}

// delDevices queues `delete flowtable inet fastpath ft { devices = { ... } }`:
// DELFLOWTABLE with a hook naming devices detaches just those (Linux 5.8+);
// the flowtable, and the flows on its other devices, stay.
func (b *batch) delDevices(devs []string) error {
	names := make([]netlink.Attribute, len(devs))
	for i, d := range devs {
		names[i] = netlink.Attribute{Type: nftables.NFTA_DEVICE_NAME, Data: []byte(d + "\x00")}
	}
	devAttrs, err := netlink.MarshalAttributes(names)
	if err != nil {
		return err
	}
	hook, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: nftables.NFTA_FLOWTABLE_HOOK_NUM, Data: binaryutil.BigEndian.PutUint32(unix.NF_NETDEV_INGRESS)},
		{Type: nftables.NFTA_FLOWTABLE_PRIORITY, Data: binaryutil.BigEndian.PutUint32(0)},
		{Type: unix.NLA_F_NESTED | nftables.NFTA_FLOWTABLE_DEVS, Data: devAttrs},
	})
	if err != nil {
		return err
	}
	attrs, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: nftables.NFTA_FLOWTABLE_TABLE, Data: []byte(TableName + "\x00")},
		{Type: nftables.NFTA_FLOWTABLE_NAME, Data: []byte(FlowtableName + "\x00")},
		{Type: unix.NLA_F_NESTED | nftables.NFTA_FLOWTABLE_HOOK, Data: hook},
	})
	if err != nil {
		return err
	}
	b.msgs = append(b.msgs, netlink.Message{
		Header: netlink.Header{
			Type:  netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | nftables.NFT_MSG_DELFLOWTABLE),
			Flags: netlink.Request | netlink.Acknowledge,
		},
		Data: append(nfgenmsg(unix.NFPROTO_INET, 0), attrs...),
	})
	return nil
}

// nfgenmsg is the header every nfnetlink message starts with.
func nfgenmsg(family uint8, resID uint16) []byte {
	return []byte{family, unix.NFNETLINK_V0, byte(resID >> 8), byte(resID)}
}

// msgType is the nf_tables message type (NFT_MSG_*) of m.
func msgType(m netlink.Message) int { return int(m.Header.Type) & 0xff }

// drainAfterError bounds the wait for the rest of the replies once one
// message failed: the kernel reports each message of an aborted batch, but
// a missing reply must not hang the caller.
const drainAfterError = 300 * time.Millisecond

// replyTimeout bounds the wait for any reply.
const replyTimeout = 30 * time.Second

// send sends the batch and returns the kernel's error for each message (nil
// where it succeeded), in message order, or an error of the socket itself.
func (b *batch) send(conn *netlink.Conn) ([]error, error) {
	if len(b.msgs) == 0 {
		return nil, nil
	}
	all := make([]netlink.Message, 0, len(b.msgs)+2)
	all = append(all, netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_MSG_BATCH_BEGIN), Flags: netlink.Request},
		Data:   nfgenmsg(unix.AF_UNSPEC, unix.NFNL_SUBSYS_NFTABLES),
	})
	all = append(all, b.msgs...)
	all = append(all, netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_MSG_BATCH_END), Flags: netlink.Request},
		Data:   nfgenmsg(unix.AF_UNSPEC, unix.NFNL_SUBSYS_NFTABLES),
	})
	if err := sendAsOwnTask(conn, all); err != nil {
		return nil, fmt.Errorf("sending nftables batch: %w", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(replyTimeout))
	errs := make([]error, len(b.msgs))
	failed := false
	for i := 0; i < len(b.msgs); {
		replies, err := conn.Receive()
		if err != nil {
			var sysErr *os.SyscallError
			switch {
			case failed && errors.Is(err, os.ErrDeadlineExceeded):
				return errs, nil // the kernel sent no more replies for the aborted batch
			case errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &sysErr):
				return errs, fmt.Errorf("reading nftables replies: %w", err)
			}
			errs[i] = err // an error the kernel put in this message's ack
			i++
			if !failed {
				failed = true
				_ = conn.SetReadDeadline(time.Now().Add(drainAfterError))
			}
			continue
		}
		i += len(replies)
	}
	return errs, nil
}

// firstError returns the index and error of the first failed message, or -1.
func firstError(errs []error) (int, error) {
	for i, err := range errs {
		if err != nil {
			return i, err
		}
	}
	return -1, nil
}
