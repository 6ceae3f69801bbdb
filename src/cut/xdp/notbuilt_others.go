//go:build !linux

package xdp

const notBuiltReason = "the XDP cut needs Linux"
