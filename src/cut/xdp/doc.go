// Package xdp drops the frames of cut connections in the network driver,
// before an skb exists: an XDP program, generated here as bytecode, looks
// each frame's 5-tuple up in a BPF hash map of cut tuples that only this
// package's Cut and Release change.
//
// The program parses Ethernet, one 802.1Q/802.1ad tag, PPPoE session
// frames (PPP IPv4 and IPv6), IPv4 without fragments after the first and
// IPv6's fixed header, then TCP or UDP ports. On a hit it counts the frame,
// stamps the time and drops it; everything else passes. It never inserts a
// key, so a Release (a map delete) holds whatever frames are in flight, and
// expiry is the caller removing tuples whose last frame is old (Stats).
//
// No clang, object file, BTF or CO-RE is needed at run time: the program is
// built in the byte order of the machine it runs on, with the packet access
// alignment that strict-alignment CPUs such as MIPS require.
package xdp
