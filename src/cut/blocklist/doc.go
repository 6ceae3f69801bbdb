// Package blocklist follows the configured block lists and hands the
// engine additions and removals: what is listed now.
//
// A list is an nftables set (read by a dump, then followed through the
// nftables monitor's set-element notifications, a transaction applied
// when it commits), a file (read again when inotify on its directory
// reports it changed) or addresses in /etc/config/fastpath. Each list is
// held as sorted disjoint ranges (spans.go; an interval set's start and
// end elements in points.go), all of them in one index, so a flow is
// matched with one binary search.
//
// The seam with the engine (package cut/engine): Lists answers whether a
// flow is listed; Watch.Run calls removed once a list dropped an address,
// after Lists stopped listing it; Watch.Added hands over what the lists
// gained; Tracked knows the addresses of tracked connections, so that an
// addition costs a conntrack pass only when one has it. Nothing here
// cuts, and nothing here imports the engine.
package blocklist
