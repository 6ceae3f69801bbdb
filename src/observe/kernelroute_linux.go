package observe

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// KernelRoute asks the kernel of network namespace netns (0: the daemon's
// own) which route a packet to dst takes, from src when src is valid.
// RTM_GETROUTE applies the policy rules (`ip rule`: mwan3, pbr) and every
// routing table, which /proc/net/route, the main table alone, cannot.
func KernelRoute(netns int, dst, src netip.Addr) (Route, error) {
	conn, err := netlink.Dial(unix.NETLINK_ROUTE, &netlink.Config{NetNS: netns})
	if err != nil {
		return Route{}, fmt.Errorf("opening rtnetlink: %w", err)
	}
	defer conn.Close()
	rt, err := getRoute(conn, dst, src)
	if err != nil && src.IsValid() {
		// The source is not (yet) an address of this router: the kernel
		// refuses an output lookup from it. Ask without it.
		rt, err = getRoute(conn, dst, netip.Addr{})
	}
	return rt, err
}

func getRoute(conn *netlink.Conn, dst, src netip.Addr) (Route, error) {
	family, bits := uint8(unix.AF_INET), 32
	if dst.Is6() && !dst.Is4In6() {
		family, bits = unix.AF_INET6, 128
	}
	ae := netlink.NewAttributeEncoder()
	ae.Bytes(unix.RTA_DST, dst.AsSlice())
	msg := make([]byte, unix.SizeofRtMsg)
	msg[0], msg[1] = family, byte(bits) // rtm_family, rtm_dst_len
	// Without RTM_F_LOOKUP_TABLE the answer names table main whatever
	// table the rules chose.
	binary.NativeEndian.PutUint32(msg[8:], unix.RTM_F_LOOKUP_TABLE) // rtm_flags
	if src.IsValid() && src.Is4() == dst.Is4() {
		ae.Bytes(unix.RTA_SRC, src.AsSlice())
		msg[2] = byte(bits) // rtm_src_len
	}
	attrs, err := ae.Encode()
	if err != nil {
		return Route{}, err
	}
	replies, err := conn.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_GETROUTE, Flags: netlink.Request},
		Data:   append(msg, attrs...),
	})
	if err != nil {
		return Route{}, fmt.Errorf("route to %s: %w", dst, err)
	}
	if len(replies) != 1 || len(replies[0].Data) < unix.SizeofRtMsg {
		return Route{}, fmt.Errorf("route to %s: %d unexpected replies", dst, len(replies))
	}
	rt, oif, err := parseRoute(replies[0].Data, dst, bits)
	if err != nil {
		return Route{}, err
	}
	if rt.Device, err = linkName(conn, oif); err != nil {
		return Route{}, fmt.Errorf("route to %s: device index %d: %w", dst, oif, err)
	}
	return rt, nil
}

// linkName asks the same namespace for the name of link index.
func linkName(conn *netlink.Conn, index uint32) (string, error) {
	ifinfo := make([]byte, unix.SizeofIfInfomsg)
	binary.NativeEndian.PutUint32(ifinfo[4:], index) // ifi_index
	replies, err := conn.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_GETLINK, Flags: netlink.Request},
		Data:   ifinfo,
	})
	if err != nil {
		return "", err
	}
	if len(replies) != 1 || len(replies[0].Data) < unix.SizeofIfInfomsg {
		return "", fmt.Errorf("%d unexpected replies", len(replies))
	}
	ad, err := netlink.NewAttributeDecoder(replies[0].Data[unix.SizeofIfInfomsg:])
	if err != nil {
		return "", err
	}
	for ad.Next() {
		if ad.Type() == unix.IFLA_IFNAME {
			return ad.String(), nil
		}
	}
	if err := ad.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("the link has no name")
}

// parseRoute reads an RTM_NEWROUTE answer: the output device's index,
// gateway, metric and table.
func parseRoute(data []byte, dst netip.Addr, bits int) (Route, uint32, error) {
	ad, err := netlink.NewAttributeDecoder(data[unix.SizeofRtMsg:])
	if err != nil {
		return Route{}, 0, err
	}
	rt := Route{Dst: netip.PrefixFrom(dst, bits), Table: uint32(data[4])}
	var oif uint32
	for ad.Next() {
		switch ad.Type() {
		case unix.RTA_OIF:
			oif = ad.Uint32()
		case unix.RTA_GATEWAY:
			if gw, ok := netip.AddrFromSlice(ad.Bytes()); ok {
				rt.Gateway = gw.Unmap()
			}
		case unix.RTA_PRIORITY:
			rt.Metric = ad.Uint32()
		case unix.RTA_TABLE:
			rt.Table = ad.Uint32()
		}
	}
	if err := ad.Err(); err != nil {
		return Route{}, 0, err
	}
	if oif == 0 {
		return Route{}, 0, fmt.Errorf("route to %s: the kernel named no output device (route type %d)", dst, data[7])
	}
	return rt, oif, nil
}
