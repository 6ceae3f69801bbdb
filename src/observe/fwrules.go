package observe

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
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
	_       [0]func() // not comparable: no equality function in the binary (flash)
	Present bool      `json:"present"`          // table inet fw4 exists
	Digest  string    `json:"digest,omitempty"` // "" when absent or unreadable
	Chains  int       `json:"chains"`
	Rules   int       `json:"rules"`
	Error   string    `json:"error,omitempty"` // why it could not be read
}

// maxFirewallRules bounds what a digest reads: beyond it the digest is not
// made (and the recorded one is kept), so a huge ruleset cannot grow the
// daemon.
const (
	maxFirewallRules = 20000
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

// fwChain is one chain of the table as the digest sees it: its head (a
// base chain's type, hook and policy) and its rules' canonical bytes; or
// an anonymous set: its content, and raw, its elements.
type fwChain struct {
	name    string
	body    []byte
	refs    []byte // the elements of the anonymous sets (vmaps) its rules use
	rules   int
	reached bool // a forwarded packet can reach it
}

// firewallDigest makes the digest from the kernel's dump of the table:
// NEWCHAIN and NEWRULE messages' attributes (after the nfgenmsg header)
// and, per anonymous set, its NEWSETELEM messages. A kernel's dump
// is well formed; a malformed attribute ends the walk of its level.
func firewallDigest(chains, rules [][]byte, elems map[string][][]byte) (FirewallRules, error) {
	fr := FirewallRules{Present: true}
	if len(rules) > maxFirewallRules {
		return fr, fmt.Errorf("table inet %s has %d rules, more than the %d a digest reads", FirewallTable, len(rules), maxFirewallRules)
	}
	// Anonymous sets by their content (a reload numbers their names anew):
	// a sum of their elements' hashes, which no dump order changes; refs,
	// their elements, where a vmap names the chains it jumps to.
	anon := map[string]*fwChain{}
	for name, msgs := range elems {
		s := &fwChain{}
		var sum uint64
		for _, em := range msgs {
			for a := (attrs{b: em}); a.next(); {
				for l := (attrs{b: a.v}); a.t == attrElemListElems && l.next(); {
					sum += fnv(fnvOffset, l.v)
					s.refs = append(s.refs, l.v...)
				}
			}
		}
		s.body = binary.BigEndian.AppendUint64(nil, sum)
		anon[name] = s
	}
	all := make([]*fwChain, 0, len(chains))
	var reach []*fwChain
	for _, m := range chains {
		c := &fwChain{}
		typ, hook := "", uint32(1<<31)
		for a := (attrs{b: m}); a.next(); {
			switch a.t {
			case attrChainName:
				c.name = cstr(a.v)
			case attrChainType:
				typ = cstr(a.v)
				c.body = appendAttr(c.body, a.t, a.v)
			case attrChainHook:
				c.body = appendAttr(c.body, a.t, a.v)
				for h := (attrs{b: a.v}); h.next(); {
					if h.t == attrHookNum {
						hook = be32(h.v)
					}
				}
			case attrChainPolicy:
				c.body = appendAttr(c.body, a.t, a.v)
			}
		}
		all = append(all, c)
		if c.reached = typ == "filter" && (hook == hookPrerouting || hook == hookForward || hook == hookPostrouting); c.reached {
			reach = append(reach, c)
		}
	}
	for _, m := range rules {
		chain, body, refs := ruleBody(m, anon)
		for _, c := range all {
			if c.name == chain && body != nil {
				c.body = appendAttr(c.body, 0, body)
				c.refs = append(c.refs, refs...)
				c.rules++
			}
		}
	}
	// The chains a forwarded packet can reach from the base chains: those
	// a reached chain's rules (or their vmaps) jump or go to, which their
	// bytes name as a verdict's chain attribute does. A name that appears
	// otherwise only adds a chain to the digest.
	for i := 0; i < len(reach); i++ {
		for _, c := range all {
			jump := append([]byte(c.name), 0) // as a verdict's chain attribute holds it
			if !c.reached && (bytes.Contains(reach[i].body, jump) || bytes.Contains(reach[i].refs, jump)) {
				c.reached = true
				reach = append(reach, c)
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].name < all[j].name })
	h := fnvOffset
	for _, c := range all {
		if c.reached {
			h = fnv(h, appendAttr(appendAttr(nil, 0, []byte(c.name)), 0, c.body))
			fr.Rules += c.rules
			fr.Chains++
		}
	}
	fr.Digest = fmt.Sprintf("%016x", h)
	return fr, nil
}

// fnv adds b to an FNV-1a hash (64 bits).
func fnv(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}

const fnvOffset uint64 = 14695981039346656037

// ruleBody reads a rule's chain and canonical expressions: each one's
// name and attributes, without those that are state rather than policy,
// anonymous sets by their content. body is nil for fw4's own `flow
// offload` rule, which decides nothing.
func ruleBody(m []byte, anon map[string]*fwChain) (chain string, body, refs []byte) {
	body = []byte{}
	for a := (attrs{b: m}); a.next(); {
		if a.t == attrRuleChain {
			chain = cstr(a.v)
		}
		for l := (attrs{b: a.v}); a.t == attrRuleExprs && l.next(); {
			var name string
			var data []byte
			for x := (attrs{b: l.v}); x.next(); {
				if x.t == attrExprName {
					name = cstr(x.v)
				} else if x.t == attrExprData {
					data = x.v
				}
			}
			switch name {
			case "flow_offload":
				return chain, nil, nil
			case "counter", "last":
				continue // packet and byte counts, last-seen times
			}
			body = appendAttr(body, 0, []byte(name))
			for x := (attrs{b: data}); x.next(); {
				if s := anon[cstr(x.v)]; s != nil {
					body = appendAttr(body, x.t, s.body)
					refs = append(refs, s.refs...)
				} else if name != "quota" || x.t < attrQuotaPad { // not its consumption
					body = appendAttr(body, x.t, x.v)
				}
			}
		}
	}
	return chain, body, refs
}

// attrs walks netlink attributes: after next, t is an attribute's type
// (flag bits cleared) and v its value.
type attrs struct {
	b []byte
	t uint16
	v []byte
}

func (a *attrs) next() bool {
	if len(a.b) < 4 {
		return false
	}
	n := int(binary.NativeEndian.Uint16(a.b))
	if n < 4 || n > len(a.b) {
		return false
	}
	a.t, a.v = binary.NativeEndian.Uint16(a.b[2:])&0x3fff, a.b[4:n]
	a.b = a.b[min((n+3)&^3, len(a.b)):]
	return true
}

// appendAttr appends t, the length of v and v: unambiguous when joined.
func appendAttr(b []byte, t uint16, v []byte) []byte {
	n := len(v)
	return append(append(b, byte(t>>8), byte(t), byte(n>>24), byte(n>>16), byte(n>>8), byte(n)), v...)
}

func cstr(v []byte) string {
	if n := len(v); n > 0 && v[n-1] == 0 {
		v = v[:n-1]
	}
	return string(v)
}

func be32(v []byte) uint32 {
	if len(v) < 4 {
		return 0
	}
	return uint32(v[0])<<24 | uint32(v[1])<<16 | uint32(v[2])<<8 | uint32(v[3])
}

// Text is the digest's one-line account for people.
func (fr FirewallRules) Text() string {
	if fr.Error != "" {
		return "firewall4's forward-path rules could not be read: " + fr.Error
	}
	if !fr.Present {
		return "no table inet " + FirewallTable + ": no firewall4 rules to compare"
	}
	return fmt.Sprintf("firewall4's forward path: %d chains, %d rules, digest %s", fr.Chains, fr.Rules, fr.Digest)
}
