//go:build linux

package engine

import (
	"encoding/binary"
	"fmt"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// lookupChunk is how many requests go in one write: their answers fit
// the receive buffer.
const lookupChunk = 64

// lookupTuples asks the kernel which of ts have an element in the cut
// sets now, one exact lookup each (a get, not a dump), and how many
// seconds each has left. A dump of a set that changes while it is read
// (elements go in, go out, expire) can skip live elements, so what a dump
// did not show is asked for here before it counts as gone. With an error
// the kernel could not say, and nothing counts as gone. The caller holds
// e.mu.
func (e *Engine) lookupTuples(ts []cut.Tuple) (map[string]float64, error) {
	found := map[string]float64{}
	for lo := 0; lo < len(ts); lo += lookupChunk {
		chunk := ts[lo:min(lo+lookupChunk, len(ts))]
		msgs := make([]netlink.Message, len(chunk))
		for i, t := range chunk {
			key, v6, err := cut.Key(t)
			if err != nil {
				return nil, err
			}
			set := e.set4
			if v6 {
				set = e.set6
			}
			ae := netlink.NewAttributeEncoder()
			ae.String(unix.NFTA_SET_ELEM_LIST_TABLE, e.table.Name)
			ae.String(unix.NFTA_SET_ELEM_LIST_SET, set.Name)
			ae.Nested(unix.NFTA_SET_ELEM_LIST_ELEMENTS, func(l *netlink.AttributeEncoder) error {
				l.Nested(unix.NFTA_LIST_ELEM, func(el *netlink.AttributeEncoder) error {
					el.Nested(unix.NFTA_SET_ELEM_KEY, func(k *netlink.AttributeEncoder) error {
						k.Bytes(unix.NFTA_DATA_VALUE, key)
						return nil
					})
					return nil
				})
				return nil
			})
			attrs, err := ae.Encode()
			if err != nil {
				return nil, err
			}
			msgs[i] = netlink.Message{
				Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_GETSETELEM), Flags: netlink.Request},
				Data:   append([]byte{byte(e.table.Family), unix.NFNETLINK_V0, 0, 0}, attrs...),
			}
		}
		sent, err := e.lookup.SendMessages(msgs)
		if err != nil {
			return nil, fmt.Errorf("look up cut elements: %w", err)
		}
		// Requests are answered in order: the element, or an error.
		for i, t := range chunk {
			got, err := e.lookup.Receive()
			switch {
			case isNoEnt(err):
				continue
			case err != nil:
				return nil, fmt.Errorf("look up cut element %s: %w", t, err)
			case len(got) != 1 || got[0].Header.Sequence != sent[i].Header.Sequence:
				return nil, fmt.Errorf("look up cut element %s: an answer out of order", t)
			}
			found[t.String()] = elementExpires(got[0].Data)
		}
	}
	return found, nil
}

// elementExpires reads the time left of the element in a NEWSETELEM
// answer, in seconds; 0 when it says none.
func elementExpires(data []byte) (secs float64) {
	if len(data) < 4 {
		return 0
	}
	ad, err := netlink.NewAttributeDecoder(data[4:])
	if err != nil {
		return 0
	}
	ad.ByteOrder = binary.BigEndian
	for ad.Next() {
		if ad.Type() != unix.NFTA_SET_ELEM_LIST_ELEMENTS {
			continue
		}
		ad.Nested(func(l *netlink.AttributeDecoder) error {
			for l.Next() {
				l.Nested(func(el *netlink.AttributeDecoder) error {
					for el.Next() {
						if el.Type() == unix.NFTA_SET_ELEM_EXPIRATION { // milliseconds
							secs = float64(el.Uint64()) / 1000
						}
					}
					return nil
				})
			}
			return nil
		})
	}
	return secs
}
