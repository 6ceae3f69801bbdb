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

// When to attach: on mtk_eth_soc and mvneta the first attach and the last
// detach of an XDP program stop and reopen the port (phylink down and up,
// RX rings reallocated; mtk_eth_soc also stops its PPE when the last DMA
// user stops), virtio_net pauses its queues and turns guest offloads off,
// and replacing one program by another costs nothing of that. So the
// program is attached once, when the cut starts on a device, and stays
// while no cut is active (an empty map costs one hash lookup per TCP/UDP
// frame); a restart hands it over (Leave, then the next run's Attach), and
// only turning the XDP cut off or fastpath's cleanup detaches it (Close).
//
// Where it runs: on the device whose driver receives the frames, below any
// VLAN or PPPoE device on it (the program parses both). DSA user ports
// (lan1, wan on MT7621's switch) have no native XDP, and frames on their
// conduit carry the switch's tag, which the program does not parse: those
// devices keep the netdev ingress cut, with the reason Attach gives.
