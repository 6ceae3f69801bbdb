package nft

import (
	"fmt"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// observed is what Read found, with the details reconcile needs beyond the
// public KernelFlowtable report.
type observed struct {
	netstate.KernelFlowtable
	chainShapeOK bool // filter type, forward hook, priority filter - 1, policy accept
	ruleCount    int  // rules in our chain, ours or not
}

// opKind is one change to the kernel's state; reconcile lists them, the
// batch builder turns each into netlink messages.
type opKind int

const (
	opDeleteTable  opKind = iota // delete table inet fastpath (with all it holds)
	opCreateTable                // table, flowtable, chain and rule
	opAddFlowtable               // the flowtable into an existing table
	opDelDevices                 // DELFLOWTABLE naming devices: the flowtable stays
	opAddDevices                 // NEWFLOWTABLE update naming new devices: the flowtable stays
	opAddChain                   // chain and rule into an existing table
	opReplaceChain               // empty and delete a misshapen chain, add ours and the rule
	opReplaceRules               // empty our chain, add the rule
)

type op struct {
	kind     opKind
	devices  []string
	hardware bool
	counter  bool
	after    uint64 // the packet count a rule this op adds waits for
	digest   string // the firewall digest a rule this op adds records
	recheck  bool   // the op replaces the flowtable because fw4's rules changed
	action   string // what a person reads in Result.Actions
}

// reconcile lists the changes that turn the observed state into the spec, in
// the order they must go into one batch. No changes: an empty list. It is
// pure so every transition is tested without a kernel.
func reconcile(o observed, s netstate.FlowtableSpec) []op {
	devs := normalDevices(s.Devices)
	table := "table inet " + TableName
	if !s.Enabled {
		if o.TablePresent {
			return []op{{kind: opDeleteTable, action: "deleted " + table + " (offload off)"}}
		}
		return nil
	}
	digest := s.FirewallDigest
	if digest == "" {
		digest = o.FirewallDigest // nothing read this time: keep what is recorded
	}
	create := op{kind: opCreateTable, devices: devs, hardware: s.Hardware, counter: s.Counter, after: s.OffloadAfterPackets, digest: digest,
		action: fmt.Sprintf("created %s with flowtable %s (%s) on %s", table, FlowtableName, flagWords(s.Hardware, s.Counter), deviceWords(devs))}
	if !o.TablePresent {
		return []op{create}
	}
	if o.FlowtablePresent && (o.Hardware != s.Hardware || o.Counter != s.Counter || o.Hook != "ingress" || o.Priority != 0) {
		// The kernel cannot switch "flags offload" on a live flowtable
		// (EOPNOTSUPP); a new one tears down the flows of the old.
		del := op{kind: opDeleteTable, action: fmt.Sprintf("deleted %s to recreate flowtable %s: kernel has %s hook %s priority %d, plan wants %s hook ingress priority 0",
			table, FlowtableName, flagWords(o.Hardware, o.Counter), o.Hook, o.Priority, flagWords(s.Hardware, s.Counter))}
		return []op{del, create}
	}
	if o.FlowtablePresent && o.ForwardRule && s.RecheckOnRuleChange && s.FirewallDigest != "" &&
		o.FirewallDigest != "" && o.FirewallDigest != s.FirewallDigest {
		// A fresh flowtable in the same transaction: the kernel tears
		// down every flow of the old one (their conntrack entries stay),
		// so each flow's next packet takes the slow path, where the new
		// rules decide, and an accepted one is offloaded again.
		del := op{kind: opDeleteTable, recheck: true, action: "replaced " + table + " so every offloaded flow takes the slow path once: firewall4's forward-path rules changed (digest " +
			s.FirewallDigest + ", was " + o.FirewallDigest + ")"}
		return []op{del, create}
	}
	var ops []op
	if !o.FlowtablePresent {
		ops = append(ops, op{kind: opAddFlowtable, devices: devs, hardware: s.Hardware, counter: s.Counter,
			action: fmt.Sprintf("added flowtable %s (%s) on %s", FlowtableName, flagWords(s.Hardware, s.Counter), deviceWords(devs))})
	} else {
		gone, added := difference(o.Devices, devs), difference(devs, o.Devices)
		if len(gone) > 0 {
			ops = append(ops, op{kind: opDelDevices, devices: gone, action: "removed devices " + strings.Join(gone, ", ") + " from flowtable " + FlowtableName})
		}
		if len(added) > 0 {
			ops = append(ops, op{kind: opAddDevices, devices: added, hardware: s.Hardware, counter: s.Counter,
				action: "added devices " + strings.Join(added, ", ") + " to flowtable " + FlowtableName})
		}
	}
	switch {
	case !o.ChainPresent:
		ops = append(ops, op{kind: opAddChain, after: s.OffloadAfterPackets, digest: digest, action: "added chain " + ChainName + " with its flow add rule"})
	case !o.chainShapeOK:
		ops = append(ops, op{kind: opReplaceChain, after: s.OffloadAfterPackets, digest: digest, action: "replaced chain " + ChainName + ": its type, hook, priority or policy differed"})
	case !o.ForwardRule || o.ruleCount != 1:
		ops = append(ops, op{kind: opReplaceRules, after: s.OffloadAfterPackets, digest: digest, action: fmt.Sprintf("replaced the %d rule(s) of chain %s with the flow add rule", o.ruleCount, ChainName)})
	case o.OffloadAfterPackets != s.OffloadAfterPackets:
		// A new rule, the same flowtable: offloaded flows stay offloaded.
		ops = append(ops, op{kind: opReplaceRules, after: s.OffloadAfterPackets, digest: digest, action: fmt.Sprintf("replaced the flow add rule of chain %s: it offloaded after %d packets, the plan says %d",
			ChainName, o.OffloadAfterPackets, s.OffloadAfterPackets)})
	case digest != o.FirewallDigest:
		// Recorded only: nothing to re-check (none recorded before, or
		// recheck_on_rule_change is off). The flowtable stays.
		ops = append(ops, op{kind: opReplaceRules, after: s.OffloadAfterPackets, digest: digest, action: "recorded firewall4's forward-path rules (digest " + digest + ") in the flow add rule; flows stay offloaded"})
	}
	return ops
}

// difference lists the names in a that b lacks, in a's order.
func difference(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}

func flagWords(hardware, counter bool) string {
	var w []string
	if hardware {
		w = append(w, "offload")
	}
	if counter {
		w = append(w, "counter")
	}
	if len(w) == 0 {
		return "no flags"
	}
	return "flags " + strings.Join(w, ",")
}

func deviceWords(devs []string) string {
	if len(devs) == 0 {
		return "no devices"
	}
	return "devices " + strings.Join(devs, ", ")
}
