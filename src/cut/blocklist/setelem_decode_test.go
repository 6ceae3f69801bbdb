package blocklist

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/mdlayher/netlink"
)

// The set-element decoder walks attributes itself, without allocating;
// these check it against the netlink library's AttributeDecoder, which it
// replaced: the same events and the same errors from any bytes.

func FuzzDecodeMatchesLibrary(f *testing.F) {
	f.Add(uint8(nftMsgNewSetElem), newSetElemMsg(f, 1, "banIP", "blocklistv4", []byte{198, 51, 100, 7}, []byte{203, 0, 113, 1}))
	f.Add(uint8(nftMsgDelSetElem), newSetElemMsg(f, 10, "t", "s", make([]byte, 16), []byte{1}))
	f.Add(uint8(nftMsgNewSet), newSetMsg(f, 1, "banIP", "hagezi.v4", setFlagInterval))
	f.Add(uint8(nftMsgDelSet), newSetMsg(f, 1, "banIP", "hagezi.v4", 0))
	f.Add(uint8(nftMsgDelTable), []byte{1, 0, 0, 0, 10, 0, 1, 0, 'b', 'a', 'n', 'I', 'P', 0, 0, 0})
	f.Add(uint8(nftMsgNewSetElem), newExpiringElemMsg(f))
	f.Add(uint8(nftMsgNewSetElem), []byte{1, 0, 0, 0, 4, 0})
	f.Fuzz(func(t *testing.T, typ uint8, data []byte) {
		msgType := uint16(nfnlSubsysNftables<<8) | uint16(typ)
		got, gerr := parseSetEvent(msgType, data)
		want, werr := parseSetEventLibrary(msgType, data)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("error %v, the library's %v", gerr, werr)
		}
		if gerr == nil && fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Fatalf("event %+v, the library's %+v", got, want)
		}
	})
}

// newExpiringElemMsg is a NEWSETELEM of an interval with an end key,
// flags, a timeout and an expiration.
func newExpiringElemMsg(t testing.TB) []byte {
	key, _ := netlink.MarshalAttributes([]netlink.Attribute{{Type: attrDataValue, Data: []byte{10, 0, 0, 0}}})
	end, _ := netlink.MarshalAttributes([]netlink.Attribute{{Type: attrDataValue, Data: []byte{10, 0, 0, 255}}})
	be := func(v uint64) []byte { b := make([]byte, 8); binary.BigEndian.PutUint64(b, v); return b }
	el, _ := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: attrElemKey | netlink.Nested, Data: key},
		{Type: attrElemKeyEnd | netlink.Nested, Data: end},
		{Type: attrElemFlags, Data: []byte{0, 0, 0, 1}},
		{Type: attrElemTimeout, Data: be(60000)},
		{Type: attrElemExpiration, Data: be(59000)},
	})
	list, _ := netlink.MarshalAttributes([]netlink.Attribute{{Type: attrListElem | netlink.Nested, Data: el}, {Type: 7, Data: []byte{1}}})
	body, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: attrElemListTable, Data: []byte("t\x00")},
		{Type: attrElemListSet, Data: []byte("s\x00\x00")},
		{Type: attrElemListElems | netlink.Nested, Data: list},
	})
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte{2, 0, 0, 0}, body...)
}

func parseSetEventLibrary(msgType uint16, data []byte) (setEvent, error) {
	var ev setEvent
	kind, err := setEventKindOf(msgType)
	if err != nil {
		return ev, err
	}
	if ev.Kind = kind; kind == committed {
		return ev, nil
	}
	if len(data) < 4 {
		return ev, fmt.Errorf("nf_tables message of %d bytes: shorter than its nfgenmsg header", len(data))
	}
	ev.Family = data[0]
	ad, err := netlink.NewAttributeDecoder(data[4:])
	if err != nil {
		return ev, fmt.Errorf("nf_tables message: %w", err)
	}
	ad.ByteOrder = binary.BigEndian
	elems := ev.Kind == elemsAdded || ev.Kind == elemsDeleted
	for ad.Next() {
		switch {
		case ev.Kind == tableDeleted:
			if ad.Type() == attrTableName {
				ev.Table = ad.String()
			}
		case !elems:
			switch ad.Type() {
			case attrSetTable:
				ev.Table = ad.String()
			case attrSetName:
				ev.Set = ad.String()
			case attrSetFlags:
				ev.Interval = ad.Uint32()&setFlagInterval != 0
			}
		case ad.Type() == attrElemListTable:
			ev.Table = ad.String()
		case ad.Type() == attrElemListSet:
			ev.Set = ad.String()
		case ad.Type() == attrElemListElems:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				for nad.Next() {
					if nad.Type() != attrListElem {
						continue
					}
					var el rawElem
					nad.Nested(func(ead *netlink.AttributeDecoder) error {
						for ead.Next() {
							switch ead.Type() {
							case attrElemKey:
								el.Key = dataValueLibrary(ead.Bytes())
							case attrElemKeyEnd:
								el.KeyEnd = dataValueLibrary(ead.Bytes())
							case attrElemFlags:
								if b := ead.Bytes(); len(b) == 4 {
									el.IntervalEnd = binary.BigEndian.Uint32(b)&elemFlagIntervalEnd != 0
								}
							case attrElemTimeout:
								if ms, ok := be64(ead.Bytes()); ok {
									el.Timeout = msDuration(ms)
								}
							case attrElemExpiration:
								if ms, ok := be64(ead.Bytes()); ok {
									el.Expires, el.HasExpires = msDuration(ms), true
								}
							}
						}
						return nil
					})
					ev.Elems = append(ev.Elems, el)
				}
				return nil
			})
		}
	}
	if err := ad.Err(); err != nil {
		return ev, fmt.Errorf("nf_tables message: %w", err)
	}
	return ev, nil
}
func dataValueLibrary(b []byte) []byte {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil
	}
	for ad.Next() {
		if ad.Type() == attrDataValue {
			return append([]byte(nil), ad.Bytes()...)
		}
	}
	return nil
}
