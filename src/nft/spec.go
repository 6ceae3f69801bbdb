// Package nft keeps fastpath's own nftables table (flowtable and forward
// chain) in the state a plan asks for, renders that state as nft text, and
// reads back what the kernel really has.
package nft

// Table names fastpath owns. fw4 keeps "inet fw4"; we never touch it.
const (
	TableName     = "fastpath"
	FlowtableName = "ft"
	ChainName     = "forward"
)
