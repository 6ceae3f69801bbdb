package engine

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

func TestParseSetElemEvent(t *testing.T) {
	data := newSetElemMsg(t, 1, "banIP", "blocklistv4", []byte{198, 51, 100, 7}, []byte{203, 0, 113, 1})
	ev, err := parseSetElemEvent(nfnlSubsysNftables<<8|nftMsgNewSetElem, data)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Family != 1 || ev.Table != "banIP" || ev.Set != "blocklistv4" || ev.Delete || len(ev.Elems) != 2 {
		t.Fatalf("event %+v", ev)
	}
	if string(ev.Elems[0].Key) != string([]byte{198, 51, 100, 7}) {
		t.Errorf("key %v", ev.Elems[0].Key)
	}
	ev, err = parseSetElemEvent(nfnlSubsysNftables<<8|nftMsgDelSetElem, data)
	if err != nil || !ev.Delete {
		t.Errorf("delete event: %+v %v", ev, err)
	}
	if _, err := parseSetElemEvent(nfnlSubsysNftables<<8|3, data); err != errNotSetElem {
		t.Errorf("a NEWCHAIN message parsed as set elements: %v", err)
	}
	if _, err := parseSetElemEvent(nfnlSubsysNftables<<8|nftMsgNewSetElem, []byte{1, 0}); err == nil {
		t.Error("short message accepted")
	}
}

func FuzzParseSetElemEvent(f *testing.F) {
	f.Add(newSetElemMsg(f, 1, "banIP", "blocklistv4", []byte{198, 51, 100, 7}))
	f.Add(newSetElemMsg(f, 10, "t", "s", make([]byte, 16), []byte{1}))
	f.Add([]byte{1, 0, 0, 0, 4, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := parseSetElemEvent(nfnlSubsysNftables<<8|nftMsgNewSetElem, data)
		if err != nil {
			return
		}
		elemPrefixes(ev.Elems)
	})
}
