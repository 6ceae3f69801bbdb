//go:build linux && mips

package xdp

const notBuiltReason = "native XDP is not in big-endian MIPS builds: no driver of theirs (ag71xx, lantiq, realtek) has it, so cuts are dropped at netdev ingress"
