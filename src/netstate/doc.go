// Package netstate holds the records the layers of fastpath pass along: a
// connection's tuples and its conntrack entry, the flowtable wanted and the
// one the kernel has, and the kernel's features. It imports nothing of ours,
// so the kernel readers, the planner, the appliers and the reports share
// these shapes without importing each other.
package netstate
