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

// digestComment is how our rule's comment records the digest of
// firewall4's forward-path rules: `comment "fw4 forward rules <digest>"`.
const digestComment = "fw4 forward rules "
