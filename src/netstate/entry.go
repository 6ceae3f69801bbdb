package netstate

// Entry is one conntrack entry with what explaining its offload needs
// beyond Flow: the status word and the helper bound to it.
type Entry struct {
	Flow   Flow   `json:"flow"`
	Status uint32 `json:"status"`           // IPS_* bits (uapi nf_conntrack_common.h)
	Helper string `json:"helper,omitempty"` // the conntrack helper's name (CTA_HELP), "" none
}

// Conntrack status bits (enum ip_conntrack_status in
// uapi/linux/netfilter/nf_conntrack_common.h), the same on every kernel.
const (
	StatusExpected  uint32 = 1 << 0
	StatusSeenReply uint32 = 1 << 1
	StatusAssured   uint32 = 1 << 2
	StatusConfirmed uint32 = 1 << 3
	StatusSrcNAT    uint32 = 1 << 4
	StatusDstNAT    uint32 = 1 << 5
	StatusSeqAdjust uint32 = 1 << 6
	StatusDying     uint32 = 1 << 9
	StatusNATClash  uint32 = 1 << 12 // was IPS_UNTRACKED before 5.x; set on a NAT clash's loser
	StatusHelper    uint32 = 1 << 13 // a helper was attached explicitly (ruleset, ctnetlink)
	StatusOffload   uint32 = 1 << 14
	StatusHWOffload uint32 = 1 << 15
)
