package blocklist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/mdlayher/netlink"
)

// nf_tables netlink numbers (uapi/linux/netfilter/nf_tables.h), spelled
// out so this parser builds and is fuzzed on any OS.
const (
	nfnlSubsysNftables  = 10
	nftMsgDelTable      = 2
	nftMsgNewSet        = 9
	nftMsgDelSet        = 11
	nftMsgNewSetElem    = 12
	nftMsgGetSetElem    = 13
	nftMsgDelSetElem    = 14
	nftMsgNewGen        = 15
	attrTableName       = 1 // NFTA_TABLE_NAME
	attrSetTable        = 1 // NFTA_SET_TABLE
	attrSetName         = 2 // NFTA_SET_NAME
	attrSetFlags        = 3 // NFTA_SET_FLAGS
	setFlagInterval     = 4 // NFT_SET_INTERVAL
	attrElemListTable   = 1 // NFTA_SET_ELEM_LIST_TABLE
	attrElemListSet     = 2 // NFTA_SET_ELEM_LIST_SET
	attrElemListElems   = 3 // NFTA_SET_ELEM_LIST_ELEMENTS
	attrListElem        = 1 // NFTA_LIST_ELEM
	attrElemKey         = 1 // NFTA_SET_ELEM_KEY
	attrElemFlags       = 3 // NFTA_SET_ELEM_FLAGS
	attrElemTimeout     = 4 // NFTA_SET_ELEM_TIMEOUT: ms, be64
	attrElemExpiration  = 5 // NFTA_SET_ELEM_EXPIRATION: ms left when the message was made, be64
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
	// Timeout and Expires are the element's timeout and the time it had
	// left when the kernel wrote the message (0 and false: it never
	// expires). The kernel expires it by itself, and may not say so.
	Timeout    time.Duration
	Expires    time.Duration
	HasExpires bool
}

// life is how long the element had left when its message was made, and
// whether it expires at all: the expiration where the kernel sent one,
// else its whole timeout (the latest it can expire).
func (e rawElem) life() (time.Duration, bool) {
	switch {
	case e.HasExpires:
		return e.Expires, true
	case e.Timeout > 0:
		return e.Timeout, true
	}
	return 0, false
}

// setEventKind is what a notification of the nf_tables group that a block
// list follows says.
type setEventKind uint8

const (
	elemsAdded   setEventKind = iota + 1 // NEWSETELEM
	elemsDeleted                         // DELSETELEM
	setAdded                             // NEWSET
	setDeleted                           // DELSET
	tableDeleted                         // DELTABLE (Set is empty)
	committed                            // NEWGEN: the transaction's notifications are all in
)

// setEvent is one such notification. The library's monitor drops the
// table and set names of elements; a watcher needs them to tell the
// watched set from every other.
type setEvent struct {
	Kind     setEventKind
	Family   uint8
	Table    string
	Set      string
	Interval bool // setAdded: the set has flags interval
	Elems    []rawElem
}

var errNotSetElem = errors.New("not a table, set, set element or generation message")

// parseSetEvent decodes a message of the nf_tables multicast group:
// msgType is the netlink header type, data its payload (nfgenmsg first).
func parseSetEvent(msgType uint16, data []byte) (setEvent, error) {
	var ev setEvent
	if msgType>>8 != nfnlSubsysNftables {
		return ev, errNotSetElem
	}
	switch msgType & 0xff {
	case nftMsgNewSetElem:
		ev.Kind = elemsAdded
	case nftMsgDelSetElem:
		ev.Kind = elemsDeleted
	case nftMsgNewSet:
		ev.Kind = setAdded
	case nftMsgDelSet:
		ev.Kind = setDeleted
	case nftMsgDelTable:
		ev.Kind = tableDeleted
	case nftMsgNewGen:
		ev.Kind = committed
		return ev, nil
	default:
		return ev, errNotSetElem
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
								el.Key = dataValue(ead.Bytes())
							case attrElemKeyEnd:
								el.KeyEnd = dataValue(ead.Bytes())
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

// be64 reads an 8-byte big-endian attribute.
func be64(b []byte) (uint64, bool) {
	if len(b) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(b), true
}

// msDuration turns the kernel's milliseconds into a duration, capped so
// that a malformed message cannot overflow it (the cap is 292 years).
func msDuration(ms uint64) time.Duration {
	const most = uint64(math.MaxInt64 / int64(time.Millisecond))
	return time.Duration(min(ms, most)) * time.Millisecond
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
