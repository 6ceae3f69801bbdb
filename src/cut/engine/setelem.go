package engine

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
)

// nf_tables netlink numbers (uapi/linux/netfilter/nf_tables.h), spelled
// out so this parser builds and is fuzzed on any OS.
const (
	nfnlSubsysNftables  = 10
	nftMsgNewSetElem    = 12
	nftMsgDelSetElem    = 14
	attrElemListTable   = 1 // NFTA_SET_ELEM_LIST_TABLE
	attrElemListSet     = 2 // NFTA_SET_ELEM_LIST_SET
	attrElemListElems   = 3 // NFTA_SET_ELEM_LIST_ELEMENTS
	attrListElem        = 1 // NFTA_LIST_ELEM
	attrElemKey         = 1 // NFTA_SET_ELEM_KEY
	attrElemFlags       = 3 // NFTA_SET_ELEM_FLAGS
	attrElemKeyEnd      = 10
	attrDataValue       = 1 // NFTA_DATA_VALUE
	elemFlagIntervalEnd = 1 // NFT_SET_ELEM_INTERVAL_END
)

// rawElem is one element of an address set: a key, and for interval sets
// either an inclusive KeyEnd (newer nft) or a separate element flagged as
// the exclusive end of an interval.
type rawElem struct {
	Key, KeyEnd []byte
	IntervalEnd bool
}

// setElemEvent is a NEWSETELEM or DELSETELEM notification. The library's
// monitor drops the table and set names; a watcher needs them to tell
// the watched set from every other.
type setElemEvent struct {
	Family uint8
	Table  string
	Set    string
	Delete bool
	Elems  []rawElem
}

var errNotSetElem = errors.New("not a set element message")

// parseSetElemEvent decodes a message of the nf_tables multicast group:
// msgType is the netlink header type, data its payload (nfgenmsg first).
func parseSetElemEvent(msgType uint16, data []byte) (setElemEvent, error) {
	var ev setElemEvent
	if msgType>>8 != nfnlSubsysNftables {
		return ev, errNotSetElem
	}
	switch msgType & 0xff {
	case nftMsgNewSetElem:
	case nftMsgDelSetElem:
		ev.Delete = true
	default:
		return ev, errNotSetElem
	}
	if len(data) < 4 {
		return ev, fmt.Errorf("set element message of %d bytes: shorter than its nfgenmsg header", len(data))
	}
	ev.Family = data[0]
	ad, err := netlink.NewAttributeDecoder(data[4:])
	if err != nil {
		return ev, fmt.Errorf("set element message: %w", err)
	}
	ad.ByteOrder = binary.BigEndian
	for ad.Next() {
		switch ad.Type() {
		case attrElemListTable:
			ev.Table = ad.String()
		case attrElemListSet:
			ev.Set = ad.String()
		case attrElemListElems:
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
								el.Key = dataValue(ead.Bytes())
							case attrElemKeyEnd:
								el.KeyEnd = dataValue(ead.Bytes())
							case attrElemFlags:
								if b := ead.Bytes(); len(b) == 4 {
									el.IntervalEnd = binary.BigEndian.Uint32(b)&elemFlagIntervalEnd != 0
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
		return ev, fmt.Errorf("set element message: %w", err)
	}
	return ev, nil
}

// dataValue unwraps the NFTA_DATA_VALUE inside a key attribute.
func dataValue(b []byte) []byte {
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
