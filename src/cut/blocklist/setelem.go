package blocklist

import (
	"bytes"
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

	names [2]string // while decoding: names to reuse (name)
}

// name reads a string attribute, its NULs trimmed, as one of ev.names
// where it is one.
func (ev *setEvent) name(b []byte) string {
	b = bytes.TrimRight(b, "\x00")
	for _, n := range ev.names {
		if n != "" && string(b) == n {
			return n
		}
	}
	return string(b)
}

var errNotSetElem = errors.New("not a table, set, set element or generation message")

// parseSetEvent decodes a message of the nf_tables multicast group:
// msgType is the netlink header type, data its payload (nfgenmsg first).
// The elements' keys are parts of data, not copies: a notification's
// elements are used before its batch goes, and a copy each was most of
// what a 100,000-element load allocated.
func parseSetEvent(msgType uint16, data []byte) (setEvent, error) {
	return parseSetEventAfter(msgType, data, setEvent{})
}

// parseSetEventAfter is parseSetEvent for a watch, which reads events one
// after another: the elements go in prev's array (prev's are used up),
// and a table or set name prev had is reused, not allocated again (a
// load's notifications all name one set).
func parseSetEventAfter(msgType uint16, data []byte, prev setEvent) (setEvent, error) {
	ev := setEvent{Elems: prev.Elems[:0]}
	ev.names = [2]string{prev.Table, prev.Set}
	err := decodeSetEvent(msgType, data, &ev, func(el rawElem) { ev.Elems = append(ev.Elems, el) })
	ev.names = [2]string{}
	return ev, err
}

// setEventKindOf is what a nf_tables message type says to a block list;
// errNotSetElem for a message it does not follow.
func setEventKindOf(msgType uint16) (setEventKind, error) {
	if msgType>>8 != nfnlSubsysNftables {
		return 0, errNotSetElem
	}
	switch msgType & 0xff {
	case nftMsgNewSetElem:
		return elemsAdded, nil
	case nftMsgDelSetElem:
		return elemsDeleted, nil
	case nftMsgNewSet:
		return setAdded, nil
	case nftMsgDelSet:
		return setDeleted, nil
	case nftMsgDelTable:
		return tableDeleted, nil
	case nftMsgNewGen:
		return committed, nil
	}
	return 0, errNotSetElem
}

// decodeSetEvent is parseSetEvent with each element handed to elem as it
// is read (keys valid only during the call), so that a dump of a set
// need not hold its elements.
func decodeSetEvent(msgType uint16, data []byte, ev *setEvent, elem func(rawElem)) error {
	kind, err := setEventKindOf(msgType)
	if err != nil {
		return err
	}
	if ev.Kind = kind; kind == committed {
		return nil
	}
	if len(data) < 4 {
		return fmt.Errorf("nf_tables message of %d bytes: shorter than its nfgenmsg header", len(data))
	}
	ev.Family = data[0]
	ad, err := newAttrs(data[4:])
	if err != nil {
		return fmt.Errorf("nf_tables message: %w", err)
	}
	elems := ev.Kind == elemsAdded || ev.Kind == elemsDeleted
	for ad.next() {
		switch {
		case ev.Kind == tableDeleted:
			if ad.typ == attrTableName {
				ev.Table = ev.name(ad.data)
			}
		case !elems:
			switch ad.typ {
			case attrSetTable:
				ev.Table = ev.name(ad.data)
			case attrSetName:
				ev.Set = ev.name(ad.data)
			case attrSetFlags:
				if len(ad.data) != 4 {
					ad.err = fmt.Errorf("netlink: attribute %d is not a uint32; length: %d", ad.typ, len(ad.data))
					break
				}
				ev.Interval = binary.BigEndian.Uint32(ad.data)&setFlagInterval != 0
			}
		case ad.typ == attrElemListTable:
			ev.Table = ev.name(ad.data)
		case ad.typ == attrElemListSet:
			ev.Set = ev.name(ad.data)
		case ad.typ == attrElemListElems:
			ad.err = decodeElems(ad.data, elem)
		}
	}
	if ad.err != nil {
		return fmt.Errorf("nf_tables message: %w", ad.err)
	}
	return nil
}

// decodeElems hands each element of an NFTA_SET_ELEM_LIST_ELEMENTS
// attribute to elem; an element cut short is handed on, then its error
// returned (the caller drops the message).
func decodeElems(b []byte, elem func(rawElem)) error {
	nad, err := newAttrs(b)
	if err != nil {
		return err
	}
	for nad.next() {
		if nad.typ != attrListElem {
			continue
		}
		var el rawElem
		ead, err := newAttrs(nad.data)
		if err != nil {
			nad.err = err
		}
		for err == nil && ead.next() {
			switch ead.typ {
			case attrElemKey:
				el.Key = dataValue(ead.data)
			case attrElemKeyEnd:
				el.KeyEnd = dataValue(ead.data)
			case attrElemFlags:
				if b := ead.data; len(b) == 4 {
					el.IntervalEnd = binary.BigEndian.Uint32(b)&elemFlagIntervalEnd != 0
				}
			case attrElemTimeout:
				if ms, ok := be64(ead.data); ok {
					el.Timeout = msDuration(ms)
				}
			case attrElemExpiration:
				if ms, ok := be64(ead.data); ok {
					el.Expires, el.HasExpires = msDuration(ms), true
				}
			}
		}
		if err == nil && ead.err != nil {
			nad.err = ead.err
		}
		elem(el)
	}
	return nad.err
}

// attrs walks netlink attributes as the netlink library's
// AttributeDecoder does (the same checks, the same errors), without
// allocating: a value, its data a part of the message.
type attrs struct {
	b    []byte
	i    int
	typ  uint16 // without the nested and byte-order flags
	data []byte
	err  error
}

var errInvalidAttr = errors.New("invalid attribute; length too short or too large")

// newAttrs checks that every attribute header of b is whole, as
// NewAttributeDecoder does before the first.
func newAttrs(b []byte) (attrs, error) {
	for i := 0; i < len(b); {
		if len(b)-i < 4 {
			return attrs{}, errInvalidAttr
		}
		i += (max(int(binary.NativeEndian.Uint16(b[i:])), 4) + 3) &^ 3
	}
	return attrs{b: b}, nil
}

func (a *attrs) next() bool {
	if a.err != nil || a.i >= len(a.b) {
		return false
	}
	rest := a.b[a.i:]
	if len(rest) < 4 {
		a.err = errInvalidAttr
		return false
	}
	n := int(binary.NativeEndian.Uint16(rest))
	if n > len(rest) || n > 0 && n < 4 {
		a.err = errInvalidAttr
		return false
	}
	a.typ = binary.NativeEndian.Uint16(rest[2:]) &^ (netlink.Nested | netlink.NetByteOrder)
	a.data = rest[4:max(n, 4)]
	a.i += (max(n, 4) + 3) &^ 3
	return true
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

// dataValue unwraps the NFTA_DATA_VALUE inside a key attribute: a part
// of b, nil when b holds none or is malformed.
func dataValue(b []byte) []byte {
	ad, err := newAttrs(b)
	if err != nil {
		return nil
	}
	for ad.next() {
		if ad.typ == attrDataValue {
			return ad.data
		}
	}
	return nil
}
