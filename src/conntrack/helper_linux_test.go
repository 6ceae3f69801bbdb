//go:build linux

package conntrack

import (
	"net/netip"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// A full read carries the helper's name (CTA_HELP) and the status word
// that explaining a connection's offload reads; the lean read skips it.
func TestEntryHelperAndStatus(t *testing.T) {
	orig := [2]netip.Addr{netip.MustParseAddr("192.168.1.23"), netip.MustParseAddr("198.51.100.21")}
	reply := [2]netip.Addr{orig[1], netip.MustParseAddr("198.51.100.2")}
	const st = 1<<1 | 1<<2 | 1<<3 | 1<<6 // SEEN_REPLY, ASSURED, CONFIRMED, SEQ_ADJUST
	msg := entryMessage(t, 1, 6, orig, reply, [4]uint16{50000, 21, 21, 50000}, st, 7)
	ae := netlink.NewAttributeEncoder()
	ae.Nested(ctaHelp, func(ae *netlink.AttributeEncoder) error {
		ae.String(ctaHelpName, "ftp")
		return nil
	})
	help, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	attrs := append(append([]byte(nil), msg[unix.NLMSG_HDRLEN+4:]...), help...)
	f, err := parseEntry(attrs, true)
	if err != nil {
		t.Fatal(err)
	}
	if f.Helper.Name != "ftp" || uint32(f.Status) != st {
		t.Errorf("helper %q, status %#x; want ftp, %#x", f.Helper.Name, uint32(f.Status), st)
	}
	if lean, err := parseEntry(attrs, false); err != nil || lean.Helper.Name != "" {
		t.Errorf("lean read: helper %q, %v; want none", lean.Helper.Name, err)
	}
}

// A filter's connection selects the entry whose original or reply
// direction it is, and no other.
func TestFilterConn(t *testing.T) {
	conn := netstate.Tuple{Proto: "tcp", Src: "192.168.1.23", Dst: "198.51.100.21", SrcPort: 50000, DstPort: 21}
	sel, err := Filter{Proto: "tcp", Conn: conn}.selector()
	if err != nil {
		t.Fatal(err)
	}
	a := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	entry := keys{family: familyIPv4, proto: 6,
		addrs: [4]netip.Addr{a("192.168.1.23"), a("198.51.100.21"), a("198.51.100.21"), a("198.51.100.2")},
		ports: [4]uint16{50000, 21, 21, 50000}}
	if !sel.matches(&entry) {
		t.Error("the original direction does not select its entry")
	}
	sel, _ = Filter{Conn: netstate.Tuple{Proto: "tcp", Src: "198.51.100.21", Dst: "198.51.100.2", SrcPort: 21, DstPort: 50000}}.selector()
	if !sel.matches(&entry) {
		t.Error("the reply direction does not select its entry")
	}
	other := entry
	other.ports[0] = 50001
	other.ports[3] = 50001
	if sel.matches(&other) {
		t.Error("another source port is selected")
	}
	if _, err := (Filter{Conn: netstate.Tuple{Proto: "tcp", Src: "x", Dst: "198.51.100.2"}}).selector(); err == nil {
		t.Error("a connection whose address does not parse is accepted")
	}
}
