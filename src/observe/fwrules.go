package observe

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/mdlayher/netlink"
)

// FirewallTable is firewall4's table, whose forward-path rules are digested.
const FirewallTable = "fw4"

// FirewallRules is a digest of the rules of firewall4's table that a
// forwarded packet meets and that can still decide about an established
// connection: the filter-type base chains on prerouting, forward and
// postrouting, and every chain they jump or go to. A re-render of the same
// rules (fw4 reloads on every hotplug event) gives the same digest: handles,
// counters, quotas' consumption, comments and the numbering of anonymous
// sets do not count; the order of rules, their expressions, anonymous sets'
// elements, chain policies and priorities do. NAT chains (consulted for a
// connection's first packet only), input and output chains, the flowtable
// and fw4's own `flow offload` rule (it decides nothing) are left out, and so
// are the elements of named sets: those are lists, which block lists follow.
type FirewallRules struct {
	Present bool   `json:"present"`          // table inet fw4 exists
	Digest  string `json:"digest,omitempty"` // "" when absent or unreadable
	Chains  int    `json:"chains"`
	Rules   int    `json:"rules"`
	Error   string `json:"error,omitempty"` // why it could not be read
}

// Limits on what a digest reads: beyond them the digest is not made (and the
// recorded one is kept), so a huge foreign ruleset cannot grow the daemon.
const (
	maxFirewallRules    = 20000
	maxAnonymousElement = 100000
)

// nf_tables attribute numbers (uapi/linux/netfilter/nf_tables.h).
const (
	attrChainName   = 3
	attrChainHook   = 4
	attrChainPolicy = 5
	attrChainType   = 7
	attrHookNum     = 1
	attrHookPrio    = 2

	attrRuleChain = 2
	attrRuleExprs = 4

	attrListElem = 1
	attrExprName = 1
	attrExprData = 2

	attrSetName  = 2
	attrSetFlags = 3
	attrSetKey   = 4
	attrSetData  = 6

	attrElemListSet   = 2
	attrElemListElems = 3
	attrElemKey       = 1
	attrElemData      = 2
	attrElemFlags     = 3
	attrElemKeyEnd    = 10

	attrDataVerdict  = 2
	attrVerdictChain = 2
	attrImmData      = 2

	attrQuotaPad      = 3
	attrQuotaConsumed = 4

	setAnonymous = 0x1

	hookPrerouting  = 0
	hookForward     = 2
	hookPostrouting = 4
)

// fwChain is one chain of the table as the digest sees it.
type fwChain struct {
	name  string
	head  string   // base chains: type, hook, priority, policy
	rules [][]byte // each rule's canonical expressions, in chain order
	jumps []string // chains its rules jump or go to
}

// fwSet is an anonymous set's canonical content.
type fwSet struct {
	digest string
	jumps  []string // chains its elements' verdicts name (a vmap)
}

// firewallDigest makes the digest from the kernel's dump of the table:
// NEWCHAIN, NEWRULE, NEWSET messages' attributes (after the nfgenmsg
// header) and, per anonymous set, its NEWSETELEM messages.
func firewallDigest(chains, rules, sets [][]byte, elems map[string][][]byte) (FirewallRules, error) {
	fr := FirewallRules{Present: true}
	anon := map[string]fwSet{}
	for _, m := range sets {
		name, flags, head, err := parseSet(m)
		if err != nil {
			return fr, err
		}
		if flags&setAnonymous == 0 {
			continue
		}
		s, err := anonSet(head, elems[name])
		if err != nil {
			return fr, fmt.Errorf("set %s: %w", name, err)
		}
		anon[name] = s
	}
	byName := map[string]*fwChain{}
	var roots []string
	for _, m := range chains {
		c, root, err := parseChain(m)
		if err != nil {
			return fr, err
		}
		byName[c.name] = c
		if root {
			roots = append(roots, c.name)
		}
	}
	if len(rules) > maxFirewallRules {
		return fr, fmt.Errorf("table inet %s has %d rules, more than the %d a digest reads", FirewallTable, len(rules), maxFirewallRules)
	}
	for _, m := range rules {
		chain, rule, jumps, err := parseRule(m, anon)
		if err != nil {
			return fr, err
		}
		c := byName[chain]
		if c == nil || rule == nil {
			continue
		}
		c.rules = append(c.rules, rule)
		c.jumps = append(c.jumps, jumps...)
	}
	// The chains a forwarded packet can reach, from the base chains.
	reach := map[string]bool{}
	for len(roots) > 0 {
		name := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		c := byName[name]
		if c == nil || reach[name] {
			continue
		}
		reach[name] = true
		roots = append(roots, c.jumps...)
	}
	names := make([]string, 0, len(reach))
	for n := range reach {
		names = append(names, n)
	}
	sort.Strings(names)
	h := fnv.New64a()
	for _, n := range names {
		c := byName[n]
		fmt.Fprintf(h, "chain %q %s %d\n", n, c.head, len(c.rules))
		for _, r := range c.rules {
			fmt.Fprintf(h, "rule %d %x\n", len(r), r)
		}
		fr.Rules += len(c.rules)
	}
	fr.Chains = len(names)
	fr.Digest = hex.EncodeToString(h.Sum(nil))
	return fr, nil
}

func decoder(b []byte) (*netlink.AttributeDecoder, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	ad.ByteOrder = binary.BigEndian
	return ad, nil
}

// parseChain reads a chain; root: a filter-type base chain on prerouting,
// forward or postrouting.
func parseChain(b []byte) (*fwChain, bool, error) {
	ad, err := decoder(b)
	if err != nil {
		return nil, false, err
	}
	c := &fwChain{}
	var typ string
	var hook, prio, policy uint32
	base := false
	for ad.Next() {
		switch ad.Type() {
		case attrChainName:
			c.name = ad.String()
		case attrChainType:
			typ = ad.String()
		case attrChainPolicy:
			policy = ad.Uint32()
		case attrChainHook:
			base = true
			ad.Nested(func(nd *netlink.AttributeDecoder) error {
				for nd.Next() {
					switch nd.Type() {
					case attrHookNum:
						hook = nd.Uint32()
					case attrHookPrio:
						prio = nd.Uint32()
					}
				}
				return nil
			})
		}
	}
	if err := ad.Err(); err != nil {
		return nil, false, fmt.Errorf("chain %q: %w", c.name, err)
	}
	if base {
		c.head = fmt.Sprintf("type %s hook %d priority %d policy %d", typ, hook, int32(prio), policy)
	}
	root := base && typ == "filter" && (hook == hookPrerouting || hook == hookForward || hook == hookPostrouting)
	return c, root, nil
}

// parseRule reads a rule's chain and canonical expressions; rule is nil for
// a rule the digest leaves out (fw4's `flow offload`).
func parseRule(b []byte, anon map[string]fwSet) (chain string, rule []byte, jumps []string, err error) {
	ad, err := decoder(b)
	if err != nil {
		return "", nil, nil, err
	}
	var out bytes.Buffer
	offload := false
	for ad.Next() {
		switch ad.Type() {
		case attrRuleChain:
			chain = ad.String()
		case attrRuleExprs:
			ad.Nested(func(list *netlink.AttributeDecoder) error {
				for list.Next() {
					if list.Type() != attrListElem {
						continue
					}
					list.Nested(func(e *netlink.AttributeDecoder) error {
						name, data := "", []byte(nil)
						for e.Next() {
							switch e.Type() {
							case attrExprName:
								name = e.String()
							case attrExprData:
								data = e.Bytes()
							}
						}
						if name == "flow_offload" {
							offload = true
						}
						j, werr := writeExpr(&out, name, data, anon)
						jumps = append(jumps, j...)
						return werr
					})
				}
				return nil
			})
		}
	}
	if err := ad.Err(); err != nil {
		return "", nil, nil, fmt.Errorf("rule in chain %q: %w", chain, err)
	}
	if offload {
		return chain, nil, nil, nil
	}
	return chain, out.Bytes(), jumps, nil
}

// writeExpr writes one expression's canonical form: its name and its
// attributes, without those that are state rather than policy, with
// anonymous sets named by their content.
func writeExpr(out *bytes.Buffer, name string, data []byte, anon map[string]fwSet) ([]string, error) {
	switch name {
	case "counter", "last": // packet and byte counts, last-seen times
		return nil, nil
	}
	ad, err := decoder(data)
	if err != nil {
		return nil, err
	}
	var jumps []string
	fmt.Fprintf(out, "%s{", name)
	for ad.Next() {
		t, v := ad.Type(), ad.Bytes()
		if name == "quota" && (t == attrQuotaConsumed || t == attrQuotaPad) {
			continue
		}
		if s, ok := anon[strings.TrimSuffix(string(v), "\x00")]; ok && len(v) > 1 {
			fmt.Fprintf(out, "%d=set:%s;", t, s.digest)
			jumps = append(jumps, s.jumps...)
			continue
		}
		if name == "immediate" && t == attrImmData {
			if c := verdictChain(v); c != "" {
				jumps = append(jumps, c)
			}
		}
		fmt.Fprintf(out, "%d=%x;", t, v)
	}
	out.WriteString("}")
	return jumps, ad.Err()
}

// verdictChain is the chain a data attribute's verdict jumps or goes to.
func verdictChain(b []byte) string {
	chain := ""
	ad, err := decoder(b)
	if err != nil {
		return ""
	}
	for ad.Next() {
		if ad.Type() != attrDataVerdict {
			continue
		}
		ad.Nested(func(vd *netlink.AttributeDecoder) error {
			for vd.Next() {
				if vd.Type() == attrVerdictChain {
					chain = vd.String()
				}
			}
			return nil
		})
	}
	if ad.Err() != nil {
		return ""
	}
	return chain
}

// parseSet reads a set's name, flags and the head of its canonical form
// (key and data types, flags).
func parseSet(b []byte) (name string, flags uint32, head string, err error) {
	ad, err := decoder(b)
	if err != nil {
		return "", 0, "", err
	}
	var key, data uint32
	for ad.Next() {
		switch ad.Type() {
		case attrSetName:
			name = ad.String()
		case attrSetFlags:
			flags = ad.Uint32()
		case attrSetKey:
			key = ad.Uint32()
		case attrSetData:
			data = ad.Uint32()
		}
	}
	if err := ad.Err(); err != nil {
		return "", 0, "", fmt.Errorf("set %q: %w", name, err)
	}
	return name, flags, fmt.Sprintf("key %d data %d flags %d", key, data, flags), nil
}

// anonSet digests an anonymous set's elements, in an order of their own
// (the kernel's dump order depends on its set backend).
func anonSet(head string, msgs [][]byte) (fwSet, error) {
	var elems []string
	var jumps []string
	for _, m := range msgs {
		ad, err := decoder(m)
		if err != nil {
			return fwSet{}, err
		}
		for ad.Next() {
			if ad.Type() != attrElemListElems {
				continue
			}
			ad.Nested(func(list *netlink.AttributeDecoder) error {
				for list.Next() {
					if list.Type() != attrListElem {
						continue
					}
					var e strings.Builder
					list.Nested(func(ed *netlink.AttributeDecoder) error {
						for ed.Next() {
							switch t := ed.Type(); t {
							case attrElemKey, attrElemKeyEnd, attrElemFlags:
								fmt.Fprintf(&e, "%d=%x;", t, ed.Bytes())
							case attrElemData:
								v := ed.Bytes()
								if c := verdictChain(v); c != "" {
									jumps = append(jumps, c)
								}
								fmt.Fprintf(&e, "%d=%x;", t, v)
							}
						}
						return nil
					})
					elems = append(elems, e.String())
					if len(elems) > maxAnonymousElement {
						return fmt.Errorf("more than %d elements", maxAnonymousElement)
					}
				}
				return nil
			})
		}
		if err := ad.Err(); err != nil {
			return fwSet{}, err
		}
	}
	sort.Strings(elems)
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\n", head)
	for _, e := range elems {
		fmt.Fprintf(h, "%s\n", e)
	}
	return fwSet{digest: hex.EncodeToString(h.Sum(nil)), jumps: jumps}, nil
}

// Text is the digest's one-line account for people.
func (fr FirewallRules) Text() string {
	switch {
	case fr.Error != "":
		return "firewall4's forward-path rules could not be read: " + fr.Error
	case !fr.Present:
		return "no table inet " + FirewallTable + ": no firewall4 rules to compare"
	}
	return fmt.Sprintf("firewall4's forward path: %d chains, %d rules, digest %s", fr.Chains, fr.Rules, fr.Digest)
}
