// Package conntrack reads and deletes conntrack entries, with their offload
// status bits, and reports new and destroyed connections.
package conntrack
