// Package nlframe splits one read of a netlink socket into its messages,
// as the answer to a dump arrives: the parts of one request, up to its
// NLMSG_DONE or error. It imports nothing of ours, so every kernel reader
// walks the framing the same way.
package nlframe

import (
	"encoding/binary"
	"fmt"
	"syscall"
)

// Netlink header numbers (uapi/linux/netlink.h), spelled out so the walk
// builds and is tested on any OS.
const (
	hdrLen     = 16 // NLMSG_HDRLEN
	msgNoop    = 1  // NLMSG_NOOP
	msgError   = 2  // NLMSG_ERROR
	msgDone    = 3  // NLMSG_DONE
	msgOverrun = 4  // NLMSG_OVERRUN
)

// Walk calls fn with the type and payload of each message of buf that
// answers the request with sequence number seq; messages of other
// requests (late answers to an abandoned one) are passed over. done
// reports the answer's end: NLMSG_DONE, or an acknowledgement. The
// kernel's error answer is returned as a syscall.Errno, and fn's first
// error ends the walk.
func Walk(buf []byte, seq uint32, fn func(typ uint16, body []byte) error) (done bool, err error) {
	for len(buf) >= hdrLen {
		n := int(binary.NativeEndian.Uint32(buf[0:4]))
		if n < hdrLen || n > len(buf) {
			return false, fmt.Errorf("netlink message of %d bytes in a %d-byte read", n, len(buf))
		}
		typ := binary.NativeEndian.Uint16(buf[4:6])
		mseq := binary.NativeEndian.Uint32(buf[8:12])
		body := buf[hdrLen:n]
		buf = buf[min((n+3)&^3, len(buf)):]
		if mseq != seq {
			continue
		}
		switch typ {
		case msgDone:
			return true, nil
		case msgError:
			if len(body) < 4 {
				return false, fmt.Errorf("short netlink error message")
			}
			if code := int32(binary.NativeEndian.Uint32(body[:4])); code != 0 {
				return false, syscall.Errno(-code)
			}
			return true, nil
		case msgNoop, msgOverrun:
			continue
		}
		if err := fn(typ, body); err != nil {
			return false, err
		}
	}
	return false, nil
}
