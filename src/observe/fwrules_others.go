//go:build !linux

package observe

import "errors"

// ReadFirewallRules needs nf_tables' netlink interface, which only Linux has.
func ReadFirewallRules(netns int) FirewallRules {
	return FirewallRules{Error: errors.New("reading nftables is implemented on Linux only").Error()}
}
