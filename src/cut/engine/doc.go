// Package engine applies cuts: it keeps the netdev table of the cut (and
// the XDP backend) in the state the config asks for, drops cut
// connections there and deletes their conntrack entries, releases and
// expires cuts, and reports them. It cuts what package blocklist says the
// watched block lists name, and releases what they no longer name.
//
// It lives apart from package cut so that the config, the plan and the
// reports read the cut's values without the kernel clients the engine holds.
package engine
