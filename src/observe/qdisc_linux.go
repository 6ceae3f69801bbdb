package observe

import (
	"encoding/binary"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// From linux/rtnetlink.h and linux/pkt_sched.h (x/sys/unix lacks them).
const (
	sizeofTcMsg = 20         // struct tcmsg
	tcHRoot     = 0xFFFFFFFF // TC_H_ROOT
	tcaKind     = 1          // TCA_KIND
)

// RootQdiscs asks the kernel of network namespace netns (0: the daemon's
// own) for the root qdisc kind of every device, by interface index
// (RTM_GETQDISC dump).
func RootQdiscs(netns int) (map[int]string, error) {
	conn, err := netlink.Dial(unix.NETLINK_ROUTE, &netlink.Config{NetNS: netns})
	if err != nil {
		return nil, fmt.Errorf("opening rtnetlink: %w", err)
	}
	defer conn.Close()
	replies, err := conn.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_GETQDISC, Flags: netlink.Request | netlink.Dump},
		Data:   make([]byte, sizeofTcMsg),
	})
	if err != nil {
		return nil, fmt.Errorf("listing qdiscs: %w", err)
	}
	out := map[int]string{}
	for _, m := range replies {
		if m.Header.Type != unix.RTM_NEWQDISC || len(m.Data) < sizeofTcMsg {
			continue
		}
		// struct tcmsg: family, pad[3], ifindex, handle, parent, info
		if binary.NativeEndian.Uint32(m.Data[12:]) != tcHRoot {
			continue
		}
		ad, err := netlink.NewAttributeDecoder(m.Data[sizeofTcMsg:])
		if err != nil {
			return nil, err
		}
		for ad.Next() {
			if ad.Type() == tcaKind {
				out[int(int32(binary.NativeEndian.Uint32(m.Data[4:])))] = ad.String()
			}
		}
		if err := ad.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
