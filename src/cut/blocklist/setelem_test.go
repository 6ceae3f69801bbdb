package blocklist

import (
	"encoding/binary"
	"testing"

	"github.com/mdlayher/netlink"
)

// newSetElemMsg builds what the kernel multicasts for
//
//	nft add element inet banIP blocklistv4 { 198.51.100.7 }
func newSetElemMsg(t testing.TB, family uint8, table, set string, keys ...[]byte) []byte {
	t.Helper()
	var elems []netlink.Attribute
	for _, k := range keys {
		val, _ := netlink.MarshalAttributes([]netlink.Attribute{{Type: attrDataValue, Data: k}})
		el, _ := netlink.MarshalAttributes([]netlink.Attribute{{Type: attrElemKey | netlink.Nested, Data: val}})
		elems = append(elems, netlink.Attribute{Type: attrListElem | netlink.Nested, Data: el})
	}
	list, _ := netlink.MarshalAttributes(elems)
	body, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: attrElemListTable, Data: append([]byte(table), 0)},
		{Type: attrElemListSet, Data: append([]byte(set), 0)},
		{Type: attrElemListElems | netlink.Nested, Data: list},
	})
	if err != nil {
		t.Fatal(err)
	}
	hdr := []byte{family, 0, 0, 0}
	binary.BigEndian.PutUint16(hdr[2:], 7)
	return append(hdr, body...)
}

func TestParseSetEvent(t *testing.T) {
	data := newSetElemMsg(t, 1, "banIP", "blocklistv4", []byte{198, 51, 100, 7}, []byte{203, 0, 113, 1})
	ev, err := parseSetEvent(nfnlSubsysNftables<<8|nftMsgNewSetElem, data)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Family != 1 || ev.Table != "banIP" || ev.Set != "blocklistv4" || ev.Kind != elemsAdded || len(ev.Elems) != 2 {
		t.Fatalf("event %+v", ev)
	}
	if string(ev.Elems[0].Key) != string([]byte{198, 51, 100, 7}) {
		t.Errorf("key %v", ev.Elems[0].Key)
	}
	ev, err = parseSetEvent(nfnlSubsysNftables<<8|nftMsgDelSetElem, data)
	if err != nil || ev.Kind != elemsDeleted {
		t.Errorf("delete event: %+v %v", ev, err)
	}
	if _, err := parseSetEvent(nfnlSubsysNftables<<8|3, data); err != errNotSetElem {
		t.Errorf("a NEWCHAIN message parsed as a set event: %v", err)
	}
	if _, err := parseSetEvent(nfnlSubsysNftables<<8|nftMsgNewSetElem, []byte{1, 0}); err == nil {
		t.Error("short message accepted")
	}
	if ev, err := parseSetEvent(nfnlSubsysNftables<<8|nftMsgNewGen, nil); err != nil || ev.Kind != committed {
		t.Errorf("NEWGEN: %+v %v", ev, err)
	}
}

// newSetMsg builds the NEWSET or DELSET of
//
//	nft add set inet banIP hagezi.v4 { type ipv4_addr; flags interval; }
func newSetMsg(t testing.TB, family uint8, table, set string, flags uint32) []byte {
	t.Helper()
	f := make([]byte, 4)
	binary.BigEndian.PutUint32(f, flags)
	body, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: attrSetTable, Data: append([]byte(table), 0)},
		{Type: attrSetName, Data: append([]byte(set), 0)},
		{Type: attrSetFlags, Data: f},
	})
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte{family, 0, 0, 0}, body...)
}

func TestParseSetAndTableEvents(t *testing.T) {
	ev, err := parseSetEvent(nfnlSubsysNftables<<8|nftMsgNewSet, newSetMsg(t, 1, "banIP", "hagezi.v4", setFlagInterval|1))
	if err != nil || ev.Kind != setAdded || ev.Table != "banIP" || ev.Set != "hagezi.v4" || !ev.Interval {
		t.Errorf("NEWSET: %+v %v", ev, err)
	}
	ev, err = parseSetEvent(nfnlSubsysNftables<<8|nftMsgDelSet, newSetMsg(t, 1, "banIP", "hagezi.v4", 0))
	if err != nil || ev.Kind != setDeleted || ev.Set != "hagezi.v4" || ev.Interval {
		t.Errorf("DELSET: %+v %v", ev, err)
	}
	body, _ := netlink.MarshalAttributes([]netlink.Attribute{{Type: attrTableName, Data: []byte("banIP\x00")}})
	ev, err = parseSetEvent(nfnlSubsysNftables<<8|nftMsgDelTable, append([]byte{1, 0, 0, 0}, body...))
	if err != nil || ev.Kind != tableDeleted || ev.Table != "banIP" || ev.Set != "" {
		t.Errorf("DELTABLE: %+v %v", ev, err)
	}
}

func FuzzParseSetElemEvent(f *testing.F) {
	f.Add(newSetElemMsg(f, 1, "banIP", "blocklistv4", []byte{198, 51, 100, 7}))
	f.Add(newSetElemMsg(f, 10, "t", "s", make([]byte, 16), []byte{1}))
	f.Add([]byte{1, 0, 0, 0, 4, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := parseSetEvent(nfnlSubsysNftables<<8|nftMsgNewSetElem, data)
		if err != nil {
			return
		}
		l := newListState(cutList("f"))
		l.interval = true
		l.queue(ev.Elems, true)
		l.commit()
	})
}
