package observe

import (
	"encoding/binary"
	"testing"

	"github.com/mdlayher/netlink"
)

// The messages below are built as the kernel dumps them (attribute numbers
// of uapi/linux/netfilter/nf_tables.h), for this ruleset:
//
//	table inet fw4 {
//		chain input { type filter hook input priority filter; policy drop; iifname "lo" accept }
//		chain forward {
//			type filter hook forward priority filter; policy drop;
//			meta l4proto { tcp, udp } flow offload @ft
//			ct state vmap { established : accept, related : accept }
//			iifname "lan0" jump forward_lan
//		}
//		chain forward_lan { counter accept }
//		chain srcnat { type nat hook postrouting priority srcnat; masquerade }
//	}

type fwRuleset struct {
	handle  uint64 // every handle and counter is offset by it: a re-render
	anonSet string // the anonymous sets' names
	vmap    []string
	lanRule [][]byte // extra expressions in forward_lan
	input   [][]byte // extra expressions in input
	offload bool     // fw4's flow offload rule
	policy  uint32   // forward's policy
}

func enc(t *testing.T, f func(ae *netlink.AttributeEncoder)) []byte {
	t.Helper()
	ae := netlink.NewAttributeEncoder()
	ae.ByteOrder = binary.BigEndian
	f(ae)
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func chainMsg(t *testing.T, name, typ string, hook, prio int32, policy uint32, handle uint64) []byte {
	return enc(t, func(ae *netlink.AttributeEncoder) {
		ae.String(1, "fw4")
		ae.Uint64(2, handle)
		ae.String(attrChainName, name)
		if typ != "" {
			ae.Nested(attrChainHook, func(nae *netlink.AttributeEncoder) error {
				nae.Uint32(attrHookNum, uint32(hook))
				nae.Uint32(attrHookPrio, uint32(prio))
				return nil
			})
			ae.Uint32(attrChainPolicy, policy)
			ae.String(attrChainType, typ)
		}
	})
}

func expr(t *testing.T, name string, data []byte) []byte {
	return enc(t, func(ae *netlink.AttributeEncoder) {
		ae.String(attrExprName, name)
		ae.Bytes(attrExprData, data)
	})
}

func ruleMsg(t *testing.T, chain string, handle uint64, exprs ...[]byte) []byte {
	return enc(t, func(ae *netlink.AttributeEncoder) {
		ae.String(1, "fw4")
		ae.String(attrRuleChain, chain)
		ae.Uint64(3, handle)
		ae.Nested(attrRuleExprs, func(nae *netlink.AttributeEncoder) error {
			for _, e := range exprs {
				nae.Bytes(attrListElem|netlink.Nested, e)
			}
			return nil
		})
		ae.Bytes(7, []byte("\x00\x0dcomment text\x00"))
	})
}

func verdictData(t *testing.T, code int32, chain string) []byte {
	return enc(t, func(ae *netlink.AttributeEncoder) {
		ae.Nested(attrDataVerdict, func(nae *netlink.AttributeEncoder) error {
			nae.Uint32(1, uint32(code))
			if chain != "" {
				nae.String(attrVerdictChain, chain)
			}
			return nil
		})
	})
}

func immediate(t *testing.T, code int32, chain string) []byte {
	return expr(t, "immediate", enc(t, func(ae *netlink.AttributeEncoder) {
		ae.Uint32(1, 0)
		ae.Bytes(attrImmData|netlink.Nested, verdictData(t, code, chain))
	}))
}

func counter(t *testing.T, n uint64) []byte {
	return expr(t, "counter", enc(t, func(ae *netlink.AttributeEncoder) { ae.Uint64(1, n*1500); ae.Uint64(2, n) }))
}

func lookup(t *testing.T, set string, dreg bool) []byte {
	return expr(t, "lookup", enc(t, func(ae *netlink.AttributeEncoder) {
		ae.String(1, set)
		ae.Uint32(2, 1)
		if dreg {
			ae.Uint32(3, 0)
		}
	}))
}

func meta(t *testing.T, key uint32) []byte {
	return expr(t, "meta", enc(t, func(ae *netlink.AttributeEncoder) { ae.Uint32(2, key); ae.Uint32(1, 1) }))
}

func cmpIif(t *testing.T, dev string) []byte {
	return expr(t, "cmp", enc(t, func(ae *netlink.AttributeEncoder) {
		ae.Uint32(1, 1)
		ae.Uint32(2, 0)
		ae.Nested(3, func(nae *netlink.AttributeEncoder) error {
			nae.Bytes(1, append([]byte(dev), make([]byte, 16-len(dev))...))
			return nil
		})
	}))
}

func elemsMsg(t *testing.T, set string, elems ...[]byte) []byte {
	return enc(t, func(ae *netlink.AttributeEncoder) {
		ae.String(1, "fw4")
		ae.String(attrElemListSet, set)
		ae.Nested(attrElemListElems, func(nae *netlink.AttributeEncoder) error {
			for _, e := range elems {
				nae.Bytes(attrListElem|netlink.Nested, e)
			}
			return nil
		})
	})
}

func elem(t *testing.T, key []byte, data []byte) []byte {
	return enc(t, func(ae *netlink.AttributeEncoder) {
		ae.Nested(attrElemKey, func(nae *netlink.AttributeEncoder) error { nae.Bytes(1, key); return nil })
		if data != nil {
			ae.Bytes(attrElemData|netlink.Nested, data)
		}
	})
}

func (r fwRuleset) digest(t *testing.T) FirewallRules {
	t.Helper()
	h := r.handle
	policy := r.policy
	chains := [][]byte{
		chainMsg(t, "input", "filter", 1, 0, 0, h+1),
		chainMsg(t, "forward", "filter", 2, 0, policy, h+2),
		chainMsg(t, "forward_lan", "", 0, 0, 0, h+3),
		chainMsg(t, "srcnat", "nat", 4, 100, 1, h+4),
	}
	protos, states := r.anonSet+"0", r.anonSet+"1"
	var rules [][]byte
	rules = append(rules, ruleMsg(t, "input", h+10, append([][]byte{cmpIif(t, "lo"), immediate(t, 1, "")}, r.input...)...))
	if r.offload {
		rules = append(rules, ruleMsg(t, "forward", h+11, meta(t, 16), lookup(t, protos, false), expr(t, "flow_offload", enc(t, func(ae *netlink.AttributeEncoder) { ae.String(1, "ft") }))))
	}
	rules = append(rules,
		ruleMsg(t, "forward", h+12, expr(t, "ct", enc(t, func(ae *netlink.AttributeEncoder) { ae.Uint32(2, 0); ae.Uint32(1, 1) })), lookup(t, states, true)),
		ruleMsg(t, "forward", h+13, cmpIif(t, "lan0"), immediate(t, -3, "forward_lan")),
		ruleMsg(t, "forward_lan", h+14, append(append([][]byte{}, r.lanRule...), counter(t, h), immediate(t, 1, ""))...),
		ruleMsg(t, "srcnat", h+15, expr(t, "masq", nil)),
	)
	vm := map[string][]byte{"established": {0, 0, 0, 2}, "related": {0, 0, 0, 4}, "new": {0, 0, 0, 8}}
	var vmElems [][]byte
	for _, k := range r.vmap {
		vmElems = append(vmElems, elem(t, vm[k], verdictData(t, 1, "")))
	}
	elems := map[string][][]byte{
		protos: {elemsMsg(t, protos, elem(t, []byte{6}, nil), elem(t, []byte{17}, nil))},
		states: {elemsMsg(t, states, vmElems...)},
	}
	fr, err := firewallDigest(chains, rules, elems)
	if err != nil {
		t.Fatal(err)
	}
	return fr
}

func TestFirewallDigest(t *testing.T) {
	base := fwRuleset{anonSet: "__set", vmap: []string{"established", "related"}, offload: true}
	want := base.digest(t)
	if want.Digest == "" || want.Chains != 2 || want.Rules != 3 {
		t.Fatalf("base: %+v, want a digest of 2 chains (forward, forward_lan) and 3 rules", want)
	}
	same := map[string]fwRuleset{}
	rerender := base
	rerender.handle = 1000 // new handles, new counter values: a fw4 reload
	same["re-rendered"] = rerender
	renamed := base
	renamed.anonSet = "__set7" // anonymous sets numbered otherwise
	same["anonymous sets renumbered"] = renamed
	reordered := base
	reordered.vmap = []string{"related", "established"}
	same["vmap elements dumped in another order"] = reordered
	noOffload := base
	noOffload.offload = false
	same["fw4's flow offload rule gone"] = noOffload
	inputRule := base
	inputRule.input = [][]byte{counter(t, 5)}
	same["a counter in the input chain"] = inputRule
	inputDrop := base
	inputDrop.input = [][]byte{cmpIif(t, "wan0")}
	same["a change of the input chain"] = inputDrop
	for name, r := range same {
		if got := r.digest(t); got.Digest != want.Digest {
			t.Errorf("%s: digest %s, want %s (unchanged)", name, got.Digest, want.Digest)
		}
	}
	differ := map[string]fwRuleset{}
	drop := base
	drop.lanRule = [][]byte{cmpIif(t, "lan0")}
	differ["a match added in a chain forward jumps to"] = drop
	vmapNew := base
	vmapNew.vmap = []string{"established", "related", "new"}
	differ["an element added to an anonymous vmap"] = vmapNew
	policy := base
	policy.policy = 1
	differ["forward's policy"] = policy
	for name, r := range differ {
		if got := r.digest(t); got.Digest == want.Digest {
			t.Errorf("%s: digest unchanged %s", name, got.Digest)
		}
	}
}

func TestFirewallDigestBounded(t *testing.T) {
	rules := make([][]byte, maxFirewallRules+1)
	for i := range rules {
		rules[i] = ruleMsg(t, "forward", uint64(i), immediate(t, 1, ""))
	}
	if _, err := firewallDigest(nil, rules, nil); err == nil {
		t.Fatal("a table of more rules than the bound was digested")
	}
}
