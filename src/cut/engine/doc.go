// Package engine applies cuts: it keeps the netdev table of the cut in the
// state the config asks for, drops cut connections there and deletes their
// conntrack entries, and cuts what watched block lists name.
//
// It lives apart from package cut because it needs package conntrack, whose
// flows are status.Flow, and package status already imports package cut
// for the cut's report types.
package engine
