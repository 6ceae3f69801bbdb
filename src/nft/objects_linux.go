package nft

import (
	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// The kernel objects fastpath owns, as google/nftables values.

func ourTable() *nftables.Table {
	return &nftables.Table{Name: TableName, Family: nftables.TableFamilyINet}
}

// ourFlowtable: `flowtable ft { hook ingress priority filter; devices = {...}; [flags offload;] [counter] }`
func ourFlowtable(devs []string, hardware, counter bool) *nftables.Flowtable {
	var flags nftables.FlowtableFlags
	if hardware {
		flags |= nftables.FlowtableFlagsHWOffload
	}
	if counter {
		flags |= nftables.FlowtableFlagsCounter
	}
	return &nftables.Flowtable{
		Table:    ourTable(),
		Name:     FlowtableName,
		Hooknum:  nftables.FlowtableHookIngress,
		Priority: nftables.FlowtablePriorityFilter,
		Devices:  devs,
		Flags:    flags,
	}
}

// forwardPriority is "filter - 1": before fw4's forward chain, so our
// flowtable takes the flow even where fw4 has one of its own.
const forwardPriority = -1

// ourChain: `chain forward { type filter hook forward priority filter - 1; policy accept; }`
func ourChain() *nftables.Chain {
	accept := nftables.ChainPolicyAccept
	return &nftables.Chain{
		Name:     ChainName,
		Table:    ourTable(),
		Type:     nftables.ChainTypeFilter,
		Hooknum:  nftables.ChainHookForward,
		Priority: nftables.ChainPriorityRef(forwardPriority),
		Policy:   &accept,
	}
}

// addOurRule queues `meta l4proto { tcp, udp } flow add @ft` (fw4 writes the
// same rule as "flow offload @ft"). The kernel adds a flow only once conntrack
// has seen the reply, so no "ct state established" match is needed.
func addOurRule(c *nftables.Conn) error {
	protos := &nftables.Set{Table: ourTable(), Anonymous: true, Constant: true, KeyType: nftables.TypeInetProto}
	elems := []nftables.SetElement{{Key: []byte{unix.IPPROTO_TCP}}, {Key: []byte{unix.IPPROTO_UDP}}}
	if err := c.AddSet(protos, elems); err != nil {
		return err
	}
	c.AddRule(&nftables.Rule{
		Table: ourTable(),
		Chain: ourChain(),
		Exprs: []expr.Any{
			&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
			&expr.Lookup{SourceRegister: 1, SetName: protos.Name, SetID: protos.ID},
			&expr.FlowOffload{Name: FlowtableName},
		},
	})
	return nil
}

// isOurRule reports whether exprs are the three expressions addOurRule
// writes; protoSet is the set the lookup names.
func isOurRule(exprs []expr.Any) (protoSet string, ok bool) {
	if len(exprs) != 3 {
		return "", false
	}
	meta, ok1 := exprs[0].(*expr.Meta)
	lookup, ok2 := exprs[1].(*expr.Lookup)
	flow, ok3 := exprs[2].(*expr.FlowOffload)
	if !ok1 || !ok2 || !ok3 {
		return "", false
	}
	if meta.Key != expr.MetaKeyL4PROTO || meta.SourceRegister || lookup.SourceRegister != meta.Register ||
		lookup.Invert || lookup.IsDestRegSet || flow.Name != FlowtableName {
		return "", false
	}
	return lookup.SetName, true
}
