package ubus

import (
	"encoding/binary"
	"fmt"
)

// A blob attribute header is one be32: bit 31 is the extended flag (set for
// blobmsg), bits 24-30 the id or blobmsg type, bits 0-23 the length
// including the 4-byte header. Attributes are zero-padded to 4 bytes.
const (
	blobHeaderLen  = 4
	blobExtended   = 1 << 31
	blobIDShift    = 24
	blobIDMask     = 0x7f
	blobLenMask    = 0xffffff
	blobAlign      = 4
	maxBlobNesting = 64 // deeper nesting is refused so a hostile frame cannot exhaust the stack
)

func align4(n int) int { return (n + blobAlign - 1) &^ (blobAlign - 1) }

// rawAttr is one decoded blob attribute: its id, extended flag and payload.
type rawAttr struct {
	id       uint8
	extended bool
	data     []byte
}

// splitAttrs cuts a payload into its blob attributes, checking every length
// and that padding stays inside the payload.
func splitAttrs(b []byte) ([]rawAttr, error) {
	var attrs []rawAttr
	for off := 0; off < len(b); {
		if len(b)-off < blobHeaderLen {
			return nil, fmt.Errorf("blob attribute at offset %d: %d bytes left, need a 4-byte header", off, len(b)-off)
		}
		h := binary.BigEndian.Uint32(b[off:])
		n := int(h & blobLenMask)
		if n < blobHeaderLen || n > len(b)-off {
			return nil, fmt.Errorf("blob attribute at offset %d: length %d outside the %d bytes left", off, n, len(b)-off)
		}
		attrs = append(attrs, rawAttr{
			id:       uint8(h >> blobIDShift & blobIDMask),
			extended: h&blobExtended != 0,
			data:     b[off+blobHeaderLen : off+n],
		})
		off += align4(n)
		if off > len(b) {
			return nil, fmt.Errorf("blob attribute ending at offset %d: padding runs past the end (%d bytes)", off, len(b))
		}
	}
	return attrs, nil
}

// appendAttr appends one attribute with its payload and zero padding.
func appendAttr(b []byte, id uint8, extended bool, payload []byte) []byte {
	n := blobHeaderLen + len(payload)
	h := uint32(id&blobIDMask)<<blobIDShift | uint32(n)
	if extended {
		h |= blobExtended
	}
	b = binary.BigEndian.AppendUint32(b, h)
	b = append(b, payload...)
	return appendPadding(b, n)
}

func appendPadding(b []byte, n int) []byte {
	for i := n; i < align4(n); i++ {
		b = append(b, 0)
	}
	return b
}

// beginAttr reserves a header for an attribute whose payload is appended
// next; endAttr fills in the length. Used for nesting without copies.
func beginAttr(b []byte) ([]byte, int) {
	return append(b, 0, 0, 0, 0), len(b)
}

func endAttr(b []byte, start int, id uint8, extended bool) []byte {
	n := len(b) - start
	h := uint32(id&blobIDMask)<<blobIDShift | uint32(n)
	if extended {
		h |= blobExtended
	}
	binary.BigEndian.PutUint32(b[start:], h)
	return appendPadding(b, n)
}
