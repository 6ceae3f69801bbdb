//go:build linux

package engine

import (
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// setFor describes cut4 or cut6 as Sync creates it.
func setFor(t *nftables.Table, v6 bool, cfg cut.Config) (*nftables.Set, error) {
	addr, name := nftables.TypeIPAddr, cut.SetName4
	if v6 {
		addr, name = nftables.TypeIP6Addr, cut.SetName6
	}
	key, err := nftables.ConcatSetType(addr, addr, nftables.TypeInetProto, nftables.TypeInetService, nftables.TypeInetService)
	if err != nil {
		return nil, err
	}
	return &nftables.Set{
		Table:         t,
		Name:          name,
		KeyType:       key,
		Concatenation: true,
		Dynamic:       true,
		HasTimeout:    true,
		Timeout:       cfg.Expiry,
		Counter:       true,
		Size:          uint32(cfg.SetSize),
	}, nil
}

// releasedSetFor describes released4 or released6 (see cut.ReleasedTimeout):
// written only by the engine, so not dynamic and without counters.
func releasedSetFor(t *nftables.Table, v6 bool, cfg cut.Config) (*nftables.Set, error) {
	s, err := setFor(t, v6, cfg)
	if err != nil {
		return nil, err
	}
	s.Name = cut.ReleasedName4
	if v6 {
		s.Name = cut.ReleasedName6
	}
	s.Dynamic, s.Counter = false, false
	s.Timeout = cut.ReleasedTimeout(cfg.Expiry)
	return s, nil
}

// Registers of the 5-tuple concatenation, as nft allocates them: 32-bit
// registers (NFT_REG32_00 = 8) except where a 16-byte address fills a
// whole 128-bit one (NFT_REG_1, NFT_REG_2).
var (
	regs4 = [5]uint32{1, 9, 10, 11, 12}
	regs6 = [5]uint32{1, 2, 16, 17, 18}
)

// cutRule is, for cut4:
//
//	meta protocol ip ip saddr . ip daddr . meta l4proto . th sport . th dport @cut4
//	    ip saddr . ip daddr . meta l4proto . th sport . th dport != @released4
//	    update @cut4 { ip saddr . ip daddr . meta l4proto . th sport . th dport timeout 10s } drop
//
// The lookup comes first: a dynset update alone would add every frame's
// tuple. The released set keeps frames in flight from undoing a release
// (cut.ReleasedTimeout says how). The registers the lookups read are left
// as they were, so the update reads the same key without loading it again.
func cutRule(t *nftables.Table, c *nftables.Chain, set, released *nftables.Set, v6 bool, expiry time.Duration) *nftables.Rule {
	ethertype, regs, alen, daddrOff := []byte{0x08, 0x00}, regs4, uint32(4), uint32(16)
	saddrOff := uint32(12)
	if v6 {
		ethertype, regs, alen, saddrOff, daddrOff = []byte{0x86, 0xdd}, regs6, 16, 8, 24
	}
	return &nftables.Rule{
		Table: t,
		Chain: c,
		Exprs: []expr.Any{
			// In the netdev family nothing has checked the frame's protocol yet.
			&expr.Meta{Key: expr.MetaKeyPROTOCOL, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ethertype},
			&expr.Payload{DestRegister: regs[0], Base: expr.PayloadBaseNetworkHeader, Offset: saddrOff, Len: alen},
			&expr.Payload{DestRegister: regs[1], Base: expr.PayloadBaseNetworkHeader, Offset: daddrOff, Len: alen},
			&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: regs[2]},
			// th: no match for non-first fragments, which carry no transport header.
			&expr.Payload{DestRegister: regs[3], Base: expr.PayloadBaseTransportHeader, Offset: 0, Len: 2},
			&expr.Payload{DestRegister: regs[4], Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
			&expr.Lookup{SourceRegister: 1, SetName: set.Name, SetID: set.ID},
			&expr.Lookup{SourceRegister: 1, SetName: released.Name, SetID: released.ID, Invert: true},
			&expr.Dynset{SrcRegKey: 1, SetName: set.Name, SetID: set.ID, Operation: unix.NFT_DYNSET_OP_UPDATE, Timeout: expiry},
			&expr.Verdict{Kind: expr.VerdictDrop},
		},
	}
}

// chainFor is the ingress base chain of one device.
func chainFor(t *nftables.Table, device string) *nftables.Chain {
	prio := nftables.ChainPriority(cut.Priority)
	policy := nftables.ChainPolicyAccept
	return &nftables.Chain{
		Name:     cut.ChainName(device),
		Table:    t,
		Type:     nftables.ChainTypeFilter,
		Hooknum:  nftables.ChainHookIngress,
		Priority: &prio,
		Policy:   &policy,
		Device:   device,
	}
}
