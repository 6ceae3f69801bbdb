//go:build linux && !mips

package xdp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// rtnetlink's XDP attributes (include/uapi/linux/if_link.h).
const (
	iflaIFName   = 3
	iflaXDP      = 43
	iflaLinkInfo = 18
	iflaInfoKind = 1

	xdpAttrFD         = 1
	xdpAttrAttached   = 2
	xdpAttrFlags      = 3
	xdpAttrProgID     = 4
	xdpAttrExpectedFD = 8

	xdpFlagUpdateIfNoExist = 1 << 0 // never replace a program already there
	xdpFlagDrvMode         = 1 << 2 // native: in the driver, before an skb exists
	xdpFlagReplace         = 1 << 4 // replace only the program given as expected (Linux 5.7)

	xdpAttachedNone = 0
	xdpAttachedDrv  = 1
	xdpAttachedSKB  = 2
	xdpAttachedHW   = 3
	xdpAttachedMany = 4
)

// linkXDP is a device's index and the XDP program on it as rtnetlink says.
type linkXDP struct {
	name     string
	kind     string // IFLA_INFO_KIND: "veth", "bridge", ...; "" for a NIC's driver
	index    int32
	attached uint8  // xdpAttached*
	progID   uint32 // 0 when none (or several, attached == xdpAttachedMany)
}

func attachedMode(a uint8) string {
	switch a {
	case xdpAttachedDrv:
		return "native"
	case xdpAttachedSKB:
		return "generic"
	case xdpAttachedHW:
		return "offloaded"
	case xdpAttachedMany:
		return "several"
	}
	return "none"
}

func ifinfomsg(index int32) []byte {
	b := make([]byte, 16) // family, pad, type, index, flags, change
	binary.NativeEndian.PutUint32(b[4:], uint32(index))
	return b
}

// queryLink reads a device's index and XDP state by name.
func queryLink(c *netlink.Conn, name string) (linkXDP, error) {
	ae := netlink.NewAttributeEncoder()
	ae.String(iflaIFName, name)
	attrs, err := ae.Encode()
	if err != nil {
		return linkXDP{}, err
	}
	msgs, err := c.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_GETLINK, Flags: netlink.Request},
		Data:   append(ifinfomsg(0), attrs...),
	})
	if err != nil {
		if errors.Is(err, unix.ENODEV) {
			return linkXDP{}, fmt.Errorf("device %s does not exist", name)
		}
		return linkXDP{}, fmt.Errorf("read device %s: %w", name, err)
	}
	for _, m := range msgs {
		if l, ok, err := parseLink(m); ok || err != nil {
			if err != nil {
				return linkXDP{}, fmt.Errorf("read device %s: %w", name, err)
			}
			return l, nil
		}
	}
	return linkXDP{}, fmt.Errorf("read device %s: no link in the kernel's answer", name)
}

// parseLink reads a link message's index and XDP state; ok is false for
// other messages.
func parseLink(m netlink.Message) (l linkXDP, ok bool, err error) {
	if m.Header.Type != unix.RTM_NEWLINK || len(m.Data) < 16 {
		return l, false, nil
	}
	l.index = int32(binary.NativeEndian.Uint32(m.Data[4:8]))
	ad, err := netlink.NewAttributeDecoder(m.Data[16:])
	if err != nil {
		return l, false, err
	}
	for ad.Next() {
		switch ad.Type() {
		case iflaIFName:
			l.name = ad.String()
		case iflaLinkInfo:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				for nad.Next() {
					if nad.Type() == iflaInfoKind {
						l.kind = nad.String()
					}
				}
				return nil
			})
		case iflaXDP:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				for nad.Next() {
					switch nad.Type() {
					case xdpAttrAttached:
						l.attached = nad.Uint8()
					case xdpAttrProgID:
						l.progID = nad.Uint32()
					}
				}
				return nil
			})
		}
	}
	return l, true, ad.Err()
}

// DetachLeftovers takes fastpath's program off every device of the network
// namespace netNS (0: the caller's) where it runs in native mode: what a
// daemon that died (kill -9, power) left behind, for `fastpath daemon
// --cleanup`. Other owners' programs stay. It returns the devices it
// cleared.
func DetachLeftovers(netNS int) ([]string, error) {
	c, err := netlink.Dial(unix.NETLINK_ROUTE, &netlink.Config{NetNS: netNS})
	if err != nil {
		return nil, fmt.Errorf("rtnetlink: %w", err)
	}
	defer c.Close()
	msgs, err := c.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_GETLINK, Flags: netlink.Request | netlink.Dump},
		Data:   ifinfomsg(0),
	})
	if err != nil {
		return nil, fmt.Errorf("list devices: %w", err)
	}
	var done []string
	var errs []error
	for _, m := range msgs {
		l, ok, _ := parseLink(m)
		if !ok || l.attached != xdpAttachedDrv || l.progID == 0 {
			continue
		}
		fd, err := progFDByID(l.progID)
		if err != nil {
			continue // gone meanwhile, or not ours to read
		}
		info, err := programInfo(fd, nil)
		if err == nil && cString(info.name[:]) == ProgramName {
			err = setXDP(c, l.index, -1, xdpFlagDrvMode|xdpFlagReplace, int32(fd))
			if errors.Is(err, unix.EINVAL) { // before Linux 5.7: no expected program
				err = setXDP(c, l.index, -1, xdpFlagDrvMode, -1)
			}
			if err == nil {
				done = append(done, l.name)
			} else if !errors.Is(err, unix.EEXIST) && !errors.Is(err, unix.ENODEV) {
				errs = append(errs, fmt.Errorf("detach XDP from %s: %s", l.name, kernelMessage(err)))
			}
		}
		unix.Close(fd)
	}
	return done, errors.Join(errs...)
}

// setXDP attaches fd (-1: detaches) with flags; with xdpFlagReplace only
// over the program expectedFD.
func setXDP(c *netlink.Conn, index int32, fd int32, flags uint32, expectedFD int32) error {
	ae := netlink.NewAttributeEncoder()
	ae.Nested(iflaXDP, func(nae *netlink.AttributeEncoder) error {
		nae.Int32(xdpAttrFD, fd)
		nae.Uint32(xdpAttrFlags, flags)
		if flags&xdpFlagReplace != 0 {
			nae.Int32(xdpAttrExpectedFD, expectedFD)
		}
		return nil
	})
	attrs, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = c.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_SETLINK, Flags: netlink.Request | netlink.Acknowledge},
		Data:   append(ifinfomsg(index), attrs...),
	})
	return err
}

// kernelMessage is the extended acknowledgement's text of a netlink error,
// or the error itself.
func kernelMessage(err error) string {
	var op *netlink.OpError
	if errors.As(err, &op) && op.Message != "" {
		return fmt.Sprintf("%v (%s)", op.Err, op.Message)
	}
	if errors.As(err, &op) {
		return op.Err.Error()
	}
	return err.Error()
}
