package nft

import (
	"encoding/binary"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/userdata"
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
// flowtable takes the flow even where fw4 has one of its own. The first
// flowtable to add a connection wins it (nft_flow_offload_eval sets
// IPS_OFFLOAD with test_and_set_bit and skips a connection that has it),
// and fw4 renders `flow offload @ft` as the first rule of its forward
// chain, before its chain-prepend includes and every verdict: a chain
// after fw4's (filter + 1) would find each flow already in fw4's
// flowtable, which every fw4 reload tears down. The chains that can stop
// an established connection run before ours: raw (-300), mangle (-150)
// and dstnat (-100) in prerouting, mangle_forward (-150).
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
// same rule as "flow offload @ft"). The kernel adds a TCP connection only
// once it is established, a UDP one from its second packet, reply or not
// (nft_flow_offload_eval on 6.12 checks no direction for UDP), as fw4
// does; its reply direction then never passes conntrack, which lists it
// [UNREPLIED] [OFFLOAD] while both directions flow. With
// after > 0 the rule offloads a connection only from its after-th packet on
// (`ct packets >= after`, both directions: google/nftables sends no
// direction for packet counts), so an inspector in the slow path sees the
// first ones; the kernel turns conntrack accounting on for such a rule.
//
// digest, when set, goes into the rule's comment (nft's userdata format).
func addOurRule(c *nftables.Conn, after uint64, digest string) error {
	protos := &nftables.Set{Table: ourTable(), Anonymous: true, Constant: true, KeyType: nftables.TypeInetProto}
	elems := []nftables.SetElement{{Key: []byte{unix.IPPROTO_TCP}}, {Key: []byte{unix.IPPROTO_UDP}}}
	if err := c.AddSet(protos, elems); err != nil {
		return err
	}
	exprs := []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Lookup{SourceRegister: 1, SetName: protos.Name, SetID: protos.ID},
	}
	if after > 0 {
		// As nft compiles it: a host-order u64, turned to network order
		// so that the kernel's memcmp-based "gte" compares numbers.
		exprs = append(exprs,
			&expr.Ct{Key: expr.CtKeyPKTS, Register: 1},
			&expr.Byteorder{SourceRegister: 1, DestRegister: 1, Op: expr.ByteorderHton, Len: 8, Size: 8},
			&expr.Cmp{Op: expr.CmpOpGte, Register: 1, Data: binary.BigEndian.AppendUint64(nil, after)})
	}
	var udata []byte
	if digest != "" {
		udata = userdata.AppendString(nil, userdata.TypeComment, digestComment+digest)
	}
	c.AddRule(&nftables.Rule{
		Table:    ourTable(),
		Chain:    ourChain(),
		Exprs:    append(exprs, &expr.FlowOffload{Name: FlowtableName}),
		UserData: udata,
	})
	return nil
}

// recordedDigest is the firewall digest our rule's comment holds ("": none).
func recordedDigest(udata []byte) string {
	comment, ok := userdata.GetString(udata, userdata.TypeComment)
	if !ok {
		return ""
	}
	d, ok := strings.CutPrefix(comment, digestComment)
	if !ok {
		return ""
	}
	return d
}

// isOurRule reports whether exprs are the expressions addOurRule writes;
// protoSet is the set the lookup names, after the packet count it waits for.
// google/nftables v0.3.0 cannot decode a byteorder expression and leaves it
// out of what it reads, so the packet-count rule reads back as five.
func isOurRule(exprs []expr.Any) (protoSet string, after uint64, ok bool) {
	if n := len(exprs); n != 3 && n != 5 && n != 6 {
		return "", 0, false
	}
	meta, ok1 := exprs[0].(*expr.Meta)
	lookup, ok2 := exprs[1].(*expr.Lookup)
	flow, ok3 := exprs[len(exprs)-1].(*expr.FlowOffload)
	if !ok1 || !ok2 || !ok3 {
		return "", 0, false
	}
	if meta.Key != expr.MetaKeyL4PROTO || meta.SourceRegister || lookup.SourceRegister != meta.Register ||
		lookup.Invert || lookup.IsDestRegSet || flow.Name != FlowtableName {
		return "", 0, false
	}
	if len(exprs) == 3 {
		return lookup.SetName, 0, true
	}
	ct, ok1 := exprs[2].(*expr.Ct)
	cmp, ok2 := exprs[len(exprs)-2].(*expr.Cmp)
	if !ok1 || !ok2 || ct.Key != expr.CtKeyPKTS || ct.SourceRegister ||
		cmp.Op != expr.CmpOpGte || cmp.Register != ct.Register || len(cmp.Data) != 8 {
		return "", 0, false
	}
	if len(exprs) == 6 {
		order, ok := exprs[3].(*expr.Byteorder)
		if !ok || order.Op != expr.ByteorderHton || order.Len != 8 || order.Size != 8 ||
			order.SourceRegister != ct.Register || order.DestRegister != ct.Register {
			return "", 0, false
		}
	}
	if after = binary.BigEndian.Uint64(cmp.Data); after == 0 {
		return "", 0, false
	}
	return lookup.SetName, after, true
}
