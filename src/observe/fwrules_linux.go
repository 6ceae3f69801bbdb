package observe

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// ReadFirewallRules digests firewall4's forward-path rules in network
// namespace netns (0: the daemon's own). The table's chains, rules, sets
// and anonymous sets' elements are four dumps; a reload between them shows
// as a change of the generation the kernel stamps on every reply, and the
// read starts again (three tries).
func ReadFirewallRules(netns int) FirewallRules {
	conn, err := netlink.Dial(unix.NETLINK_NETFILTER, &netlink.Config{NetNS: netns})
	if err != nil {
		return FirewallRules{Error: fmt.Sprintf("opening the nftables netlink socket: %v", err)}
	}
	defer conn.Close()
	var fr FirewallRules
	for try := 0; try < 3; try++ {
		var stable bool
		fr, stable = readFirewallOnce(conn)
		if stable {
			return fr
		}
	}
	return FirewallRules{Present: true, Error: "table inet " + FirewallTable + " kept changing while it was read"}
}

// readFirewallOnce is one read; stable is false when the generation changed
// during it.
func readFirewallOnce(conn *netlink.Conn) (FirewallRules, bool) {
	gen := -1
	dump := func(typ int, attrs []netlink.Attribute) ([][]byte, error) {
		attrs = append([]netlink.Attribute{{Type: 1, Data: []byte(FirewallTable + "\x00")}}, attrs...) // NFTA_*_TABLE
		data, err := netlink.MarshalAttributes(attrs)
		if err != nil {
			return nil, err
		}
		replies, err := conn.Execute(netlink.Message{
			Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | typ), Flags: netlink.Request | netlink.Dump},
			Data:   append([]byte{unix.NFPROTO_INET, unix.NFNETLINK_V0, 0, 0}, data...),
		})
		if err != nil {
			return nil, err
		}
		var out [][]byte
		for _, m := range replies {
			if len(m.Data) < 4 || int(m.Header.Type)&0xff != typ-1 { // NEW* answers GET*
				continue
			}
			if g := int(binary.BigEndian.Uint16(m.Data[2:4])); gen < 0 {
				gen = g
			} else if g != gen {
				return nil, errGenerationMoved
			}
			if tableOf(m.Data[4:]) == FirewallTable {
				out = append(out, m.Data[4:])
			}
		}
		return out, nil
	}
	fail := func(what string, err error) (FirewallRules, bool) {
		if errors.Is(err, errGenerationMoved) {
			return FirewallRules{}, false
		}
		if errors.Is(err, unix.ENOENT) {
			return FirewallRules{}, true // no table inet fw4
		}
		return FirewallRules{Present: true, Error: fmt.Sprintf("listing the %s of table inet %s: %v", what, FirewallTable, err)}, true
	}
	chains, err := dump(unix.NFT_MSG_GETCHAIN, nil)
	if err != nil {
		return fail("chains", err)
	}
	if len(chains) == 0 && !tableExists(conn) {
		return FirewallRules{}, true
	}
	rules, err := dump(unix.NFT_MSG_GETRULE, nil)
	if err != nil {
		return fail("rules", err)
	}
	sets, err := dump(unix.NFT_MSG_GETSET, nil)
	if err != nil {
		return fail("sets", err)
	}
	elems := map[string][][]byte{}
	for _, s := range sets {
		name, flags, _, err := parseSet(s)
		if err != nil || flags&setAnonymous == 0 {
			continue
		}
		e, err := dump(unix.NFT_MSG_GETSETELEM, []netlink.Attribute{{Type: attrElemListSet, Data: []byte(name + "\x00")}})
		if err != nil {
			return fail("elements of set "+name, err)
		}
		elems[name] = e
	}
	fr, err := firewallDigest(chains, rules, sets, elems)
	if err != nil {
		return FirewallRules{Present: true, Error: err.Error()}, true
	}
	return fr, true
}

var errGenerationMoved = errors.New("nftables generation changed")

// tableOf is the table attribute (type 1 in chains, rules, sets and
// element lists alike) of a message.
func tableOf(b []byte) string {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return ""
	}
	for ad.Next() {
		if ad.Type() == 1 {
			return ad.String()
		}
	}
	return ""
}

// tableExists asks for table inet fw4 itself (a table without chains).
func tableExists(conn *netlink.Conn) bool {
	data, err := netlink.MarshalAttributes([]netlink.Attribute{{Type: 1, Data: []byte(FirewallTable + "\x00")}})
	if err != nil {
		return false
	}
	_, err = conn.Execute(netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_GETTABLE), Flags: netlink.Request | netlink.Acknowledge},
		Data:   append([]byte{unix.NFPROTO_INET, unix.NFNETLINK_V0, 0, 0}, data...),
	})
	return err == nil
}
