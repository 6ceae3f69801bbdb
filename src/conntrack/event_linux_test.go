//go:build linux

package conntrack

import (
	"encoding/binary"
	"testing"

	"github.com/mdlayher/netlink"
)

// eventMessage is entryMessage's entry as the kernel multicasts it on the
// event groups: message type msgType (IPCTNL_MSG_CT_*), header flags.
func eventMessage(t *testing.T, msgType uint8, flags netlink.HeaderFlags) netlink.Message {
	t.Helper()
	b := entryMessage(t, 0, 6, addrs("10.0.0.2", "198.51.100.7"), addrs("198.51.100.7", "192.0.2.1"),
		[4]uint16{40000, 443, 443, 61000}, statusAssured, 99)
	binary.NativeEndian.PutUint16(b[4:6], nfnlSubsysCTNetlink<<8|uint16(msgType))
	binary.NativeEndian.PutUint16(b[6:8], uint16(flags))
	var m netlink.Message
	if err := m.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDecodeEvent(t *testing.T) {
	cases := []struct {
		name  string
		typ   uint8
		flags netlink.HeaderFlags
		want  string // "": not reported
	}{
		// conntrack -E:
		//     [NEW] tcp      6 120 ESTABLISHED src=10.0.0.2 dst=198.51.100.7 sport=40000 dport=443 src=198.51.100.7 dst=192.0.2.1 sport=443 dport=61000 [ASSURED] mark=66
		{"new", ipctnlMsgCTNew, netlink.Create | netlink.Excl, EventNew},
		//  [UPDATE] tcp      6 120 ESTABLISHED src=10.0.0.2 dst=198.51.100.7 sport=40000 dport=443 src=198.51.100.7 dst=192.0.2.1 sport=443 dport=61000 [ASSURED] mark=66
		{"update", ipctnlMsgCTNew, 0, ""},
		// [DESTROY] tcp      6 src=10.0.0.2 dst=198.51.100.7 sport=40000 dport=443 packets=10 bytes=1000 src=198.51.100.7 dst=192.0.2.1 sport=443 dport=61000 [ASSURED] mark=66
		{"destroy", ipctnlMsgCTDelete, 0, EventDestroy},
		// Not an event: IPCTNL_MSG_CT_GET's answer.
		{"get", 1, 0, ""},
	}
	for _, c := range cases {
		ev, ok := decodeEvent(eventMessage(t, c.typ, c.flags))
		if got := map[bool]string{true: ev.Type}[ok]; got != c.want {
			t.Errorf("%s: event %q (reported %v), want %q", c.name, ev.Type, ok, c.want)
			continue
		}
		if !ok {
			continue
		}
		f := ev.Flow
		if f.ID != 99 || f.Proto != "tcp" || f.State != "ESTABLISHED" || f.Original.String() != "tcp src=10.0.0.2 dst=198.51.100.7 sport=40000 dport=443" ||
			f.Reply.Dst != "192.0.2.1" || f.Reply.DstPort != 61000 || !f.Assured || f.Packets != 10 || f.Bytes != 1000 || f.Mark != 0x42 {
			t.Errorf("%s: flow %+v", c.name, f)
		}
	}
	// Another nfnetlink subsystem (expectations: NFNL_SUBSYS_CTNETLINK_EXP).
	m := eventMessage(t, ipctnlMsgCTNew, netlink.Create|netlink.Excl)
	m.Header.Type = netlink.HeaderType(2<<8 | ipctnlMsgCTNew)
	if ev, ok := decodeEvent(m); ok {
		t.Errorf("expectation message reported as %+v", ev)
	}
	// A destroyed entry without its reply tuple is not reported.
	m = eventMessage(t, ipctnlMsgCTDelete, 0)
	m.Data = m.Data[:4]
	if ev, ok := decodeEvent(m); ok {
		t.Errorf("empty entry reported as %+v", ev)
	}
}

// TestStatsEntries: the answer to IPCTNL_MSG_CT_GET_STATS of a table of
// 1234 entries out of 65536 (`conntrack -C` shows 1234).
func TestStatsEntries(t *testing.T) {
	ae := netlink.NewAttributeEncoder()
	ae.ByteOrder = binary.BigEndian
	ae.Uint32(ctaStatsGlobalEntries, 1234)
	ae.Uint32(2, 65536) // CTA_STATS_GLOBAL_MAX_ENTRIES
	attrs, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := statsEntries(attrs); n != 1234 || err != nil {
		t.Errorf("statsEntries = %d, %v; want 1234", n, err)
	}
	if n, err := statsEntries(nil); n != 0 || err != nil {
		t.Errorf("statsEntries(none) = %d, %v; want 0", n, err)
	}
	if _, err := statsEntries([]byte{8, 0, 1}); err == nil {
		t.Error("truncated attribute accepted")
	}
}
