package conntrack

import (
	"fmt"
	"net/netip"
	"strconv"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/status"
)

// protoNumber is the inverse of protoName.
func protoNumber(name string) (uint8, error) {
	for n := 0; n < 256; n++ {
		if protoName(uint8(n)) == name {
			return uint8(n), nil
		}
	}
	return 0, fmt.Errorf("unknown protocol %q: use tcp, udp or a protocol number", name)
}

// FlowHasAddress reports whether either end of f, in the original or the
// reply direction, lies in p (NAT hides the far end in one direction).
func FlowHasAddress(f status.Flow, p netip.Prefix) bool {
	return f.Original.HasAddressIn(p) || f.Reply.HasAddressIn(p)
}

// tupleString formats a tuple for error messages, like conntrack -L.
func tupleString(t cut.Tuple) string {
	return t.Proto + " src=" + t.Src + " dst=" + t.Dst +
		" sport=" + strconv.Itoa(int(t.SrcPort)) + " dport=" + strconv.Itoa(int(t.DstPort))
}
