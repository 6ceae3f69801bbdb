// Package engine applies cuts: it keeps the netdev table of the cut in the
// state the config asks for, drops cut connections there and deletes their
// conntrack entries, and cuts what watched block lists name.
//
// It lives apart from package cut so that the config, the plan and the
// reports read the cut's values without the kernel clients the engine holds.
package engine
