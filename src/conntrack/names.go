package conntrack

import (
	"fmt"
	"strconv"
)

// protoName names an IP protocol number the way nft and conntrack print it.
func protoName(p uint8) string {
	switch p {
	case 1:
		return "icmp"
	case 6:
		return "tcp"
	case 17:
		return "udp"
	case 58:
		return "icmpv6"
	case 132:
		return "sctp"
	case 33:
		return "dccp"
	case 136:
		return "udplite"
	case 47:
		return "gre"
	}
	return strconv.Itoa(int(p))
}

// protoNumber is the inverse of protoName.
func protoNumber(name string) (uint8, error) {
	for n := 0; n < 256; n++ {
		if protoName(uint8(n)) == name {
			return uint8(n), nil
		}
	}
	return 0, fmt.Errorf("unknown protocol %q: use tcp, udp or a protocol number", name)
}

// tcpStateNames follows enum tcp_conntrack in
// uapi/linux/netfilter/nf_conntrack_tcp.h.
var tcpStateNames = [...]string{
	"NONE", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT",
	"CLOSE_WAIT", "LAST_ACK", "TIME_WAIT", "CLOSE", "SYN_SENT2",
}

// tcpStateName names a conntrack TCP state number.
func tcpStateName(s uint8) string {
	if int(s) < len(tcpStateNames) {
		return tcpStateNames[s]
	}
	return "STATE_" + strconv.Itoa(int(s))
}
