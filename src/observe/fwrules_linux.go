package observe

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// ReadFirewallRules digests firewall4's forward-path rules in network
// namespace netns (0: the daemon's own). The table's chains, rules and
// anonymous sets' elements are several dumps; a reload between them shows
// as a change of the generation the kernel stamps on every reply, and the
// read gives no digest: the reload's own event asks for the next pass,
// which reads again.
func ReadFirewallRules(netns int) FirewallRules {
	conn, err := netlink.Dial(unix.NETLINK_NETFILTER, &netlink.Config{NetNS: netns})
	if err != nil {
		return FirewallRules{Error: "opening the nftables netlink socket: " + err.Error()}
	}
	defer conn.Close()
	d := fwDump{conn: conn, gen: -1}
	chains := d.dump(unix.NFT_MSG_GETCHAIN, "")
	if d.err == nil && len(chains) == 0 {
		return FirewallRules{} // no table inet fw4 (or an empty one)
	}
	rules := d.dump(unix.NFT_MSG_GETRULE, "")
	elems := map[string][][]byte{}
	for _, m := range d.dump(unix.NFT_MSG_GETSET, "") {
		var name string
		anonymous := false
		for a := (attrs{b: m}); a.next(); {
			if a.t == attrSetName {
				name = cstr(a.v)
			} else if a.t == attrSetFlags {
				anonymous = be32(a.v)&setAnonymous != 0
			}
		}
		if anonymous {
			elems[name] = d.dump(unix.NFT_MSG_GETSETELEM, name)
		}
	}
	if d.err != nil {
		return FirewallRules{Present: true, Error: "listing table inet " + FirewallTable + ": " + d.err.Error()}
	}
	fr, err := firewallDigest(chains, rules, elems)
	if err != nil {
		return FirewallRules{Present: true, Error: err.Error()}
	}
	return fr
}

var errGenerationMoved = errors.New("it changed while it was read")

// fwDump runs the dumps of one read: the first error stops the rest, and
// every reply must carry the generation of the first.
type fwDump struct {
	conn *netlink.Conn
	gen  int
	err  error
}

// dump returns the attributes of table inet fw4's objects of one kind
// (GET* message type typ; set: the set whose elements to list).
func (d *fwDump) dump(typ int, set string) [][]byte {
	if d.err != nil {
		return nil
	}
	nla := []netlink.Attribute{{Type: 1, Data: []byte(FirewallTable + "\x00")}} // NFTA_{CHAIN,RULE,SET,SET_ELEM_LIST}_TABLE
	if set != "" {
		nla = append(nla, netlink.Attribute{Type: attrElemListSet, Data: []byte(set + "\x00")})
	}
	req, _ := netlink.MarshalAttributes(nla)
	replies, err := d.conn.Execute(netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | typ), Flags: netlink.Request | netlink.Dump},
		Data:   append([]byte{unix.NFPROTO_INET, unix.NFNETLINK_V0, 0, 0}, req...),
	})
	if err != nil {
		d.err = err
		return nil
	}
	var out [][]byte
	for _, m := range replies {
		if len(m.Data) < 4 || int(m.Header.Type)&0xff != typ-1 { // NEW* answers GET*
			continue
		}
		if g := int(binary.BigEndian.Uint16(m.Data[2:4])); d.gen < 0 {
			d.gen = g
		} else if g != d.gen {
			d.err = errGenerationMoved
			return nil
		}
		if bytes.HasPrefix(m.Data[4:], req[:8]) { // the table attribute comes first
			out = append(out, m.Data[4:])
		}
	}
	return out
}
