//go:build linux

package conntrack

import (
	"encoding/binary"
	"fmt"
	"syscall"

	"github.com/fastpath-wrt/fastpath/src/status"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

const ipctnlMsgCTGet = 1

// TupleDump tells how a lean dump went: the entries it read, and those it
// skipped because the kernel's message could not be parsed.
type TupleDump struct {
	Entries   int
	Skipped   int
	FirstSkip error // why the first skipped entry was skipped
}

// EachTuple dumps the whole table and calls fn with each entry's family,
// protocol, original and reply tuples, id, offload and assured bits, as
// Flows reports them; state, counters, timeout and mark are left zero.
// It reads only those attributes, so it is several times cheaper than
// Flows: it is what a cut, which has to look at every entry, uses.
// When fn returns false the rest of the dump is read but not parsed.
func (c *Client) EachTuple(fn func(status.Flow) bool) (TupleDump, error) {
	var d TupleDump
	c.dumpMu.Lock()
	defer c.dumpMu.Unlock()
	req := netlink.Message{
		Header: netlink.Header{
			Type:  netlink.HeaderType(nfnlSubsysCTNetlink<<8 | ipctnlMsgCTGet),
			Flags: netlink.Request | netlink.Dump,
		},
		Data: []byte{unix.AF_UNSPEC, 0, 0, 0}, // nfgenmsg: both IPv4 and IPv6
	}
	sent, err := c.dumpConn.Send(req)
	if err != nil {
		return d, fmt.Errorf("dump conntrack tuples: send request: %w", err)
	}
	wanted := true
	for {
		n, err := readDatagram(c.dumpConn, c.dumpBuf, unix.MSG_TRUNC)
		if err != nil {
			return d, fmt.Errorf("dump conntrack tuples: read: %w", err)
		}
		if n > len(c.dumpBuf) {
			return d, fmt.Errorf("dump conntrack tuples: a %d-byte message does not fit the %d-byte buffer", n, len(c.dumpBuf))
		}
		done, err := eachEntry(c.dumpBuf[:n], sent.Header.Sequence, &d, func(f status.Flow) {
			if wanted {
				wanted = fn(f)
			}
		})
		if err != nil {
			return d, fmt.Errorf("dump conntrack tuples: %w", err)
		}
		if done {
			return d, nil
		}
	}
}

// Tuples is EachTuple collected into a slice.
func (c *Client) Tuples() ([]status.Flow, TupleDump, error) {
	var out []status.Flow
	d, err := c.EachTuple(func(f status.Flow) bool { out = append(out, f); return true })
	return out, d, err
}

// eachEntry walks the netlink messages of one read of a dump. It reports
// done at NLMSG_DONE, the kernel's error for the request as an error, and
// an entry it cannot parse as skipped in d.
func eachEntry(buf []byte, seq uint32, d *TupleDump, fn func(status.Flow)) (done bool, err error) {
	for len(buf) >= unix.NLMSG_HDRLEN {
		n := int(binary.NativeEndian.Uint32(buf[0:4]))
		if n < unix.NLMSG_HDRLEN || n > len(buf) {
			return false, fmt.Errorf("netlink message of %d bytes in a %d-byte read", n, len(buf))
		}
		typ := binary.NativeEndian.Uint16(buf[4:6])
		mseq := binary.NativeEndian.Uint32(buf[8:12])
		body := buf[unix.NLMSG_HDRLEN:n]
		buf = buf[min((n+3)&^3, len(buf)):]
		if mseq != seq {
			continue // a late answer to an earlier, abandoned request
		}
		switch typ {
		case unix.NLMSG_DONE:
			return true, nil
		case unix.NLMSG_ERROR:
			if len(body) < 4 {
				return false, fmt.Errorf("short netlink error message")
			}
			if code := int32(binary.NativeEndian.Uint32(body[:4])); code != 0 {
				return false, syscall.Errno(-code)
			}
			return true, nil
		case unix.NLMSG_NOOP, unix.NLMSG_OVERRUN:
			continue
		}
		d.Entries++
		f, err := parseMessage(body)
		if err != nil {
			d.Skipped++
			if d.FirstSkip == nil {
				d.FirstSkip = err
			}
			continue
		}
		fn(f)
	}
	return false, nil
}

// parseMessage reads one IPCTNL_MSG_CT_NEW message body: nfgenmsg, then
// the entry's attributes.
func parseMessage(body []byte) (status.Flow, error) {
	if len(body) < 4 {
		return status.Flow{}, fmt.Errorf("conntrack message of %d bytes lacks its nfgenmsg header", len(body))
	}
	f, err := parseEntry(body[4:])
	if err != nil {
		return status.Flow{}, err
	}
	return mapFlow(f).Flow, nil
}
