//go:build linux

package engine

import (
	"fmt"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// The ingress chains are attached only while a set holds a cut: a hooked
// chain costs every forwarded frame a hook call, five loads and a set
// lookup, which slows forwarding against a plain flowtable when nothing is
// cut. Every method here runs with e.mu held.

// ourChains lists the chains of the cut table in the kernel, by name.
func (e *Engine) ourChains() (map[string]*nftables.Chain, error) {
	chains, err := e.nft.ListChainsOfTableFamily(nftables.TableFamilyNetdev)
	if err != nil {
		return nil, err
	}
	have := map[string]*nftables.Chain{}
	for _, c := range chains {
		if c.Table != nil && c.Table.Name == cut.TableName {
			c.Table = e.table
			have[c.Name] = c
		}
	}
	return have, nil
}

// syncChains adds the chains of new devices, repairs chains whose rules
// are not ours, and removes the chains of devices no longer listed. Each
// device goes in its own batch so one missing device spoils no other.
func (e *Engine) syncChains() {
	want := map[string]string{} // chain name -> device
	devices := e.chainDevices()
	for _, d := range devices {
		want[cut.ChainName(d)] = d
	}
	have, ok := e.detachAllBut(want)
	if !ok {
		return
	}
	for _, d := range devices {
		name := cut.ChainName(d)
		if c, ok := have[name]; ok {
			rules, err := e.nft.GetRules(e.table, c)
			if err == nil && len(rules) == 2 && e.rulesMatch(rules) {
				e.hooked[name] = true
				continue
			}
			e.nft.FlushChain(c)
			e.queueRules(d)
		} else {
			e.queueChain(d)
		}
		if err := e.nft.Flush(); err != nil {
			e.chainRefused(d, err)
			continue
		}
		e.hooked[name] = true
	}
}

// queueChain puts a device's chain and its two rules in the pending batch.
func (e *Engine) queueChain(device string) {
	e.nft.AddChain(chainFor(e.table, device))
	e.queueRules(device)
}

func (e *Engine) queueRules(device string) {
	c := chainFor(e.table, device)
	e.nft.AddRule(cutRule(e.table, c, e.set4, e.rel4, false, e.cfg.Expiry))
	e.nft.AddRule(cutRule(e.table, c, e.set6, e.rel6, true, e.cfg.Expiry))
}

// chainRefused records a device whose chain the kernel did not take; no
// insert asks for it again until the next Sync or detach.
func (e *Engine) chainRefused(device string, err error) {
	e.chainFails[device] = true
	msg := fmt.Sprintf("cut: device %s: ingress chain not created: %v (does the device exist?)", device, err)
	e.log.Warn(msg)
	e.warn(msg)
}

// unhooked lists the recorded devices whose chain is not attached and has
// not been refused.
func (e *Engine) unhooked() []string {
	var out []string
	for _, d := range e.chainDevices() {
		if !e.hooked[cut.ChainName(d)] && !e.chainFails[d] {
			out = append(out, d)
		}
	}
	return out
}

// flushWithChains sends the elements queue puts in the batch together with
// the chains of the devices that have none yet, in one transaction: a cut
// is never in a set while its drop rule is missing. When that batch fails
// (a device that vanished refuses its chain, or a set is full), each chain
// goes alone, so the devices that take one have it before the elements
// are sent again.
func (e *Engine) flushWithChains(queue func() error) error {
	missing := e.unhooked()
	if err := queue(); err != nil {
		return err
	}
	if len(missing) == 0 {
		return e.nft.Flush()
	}
	for _, d := range missing {
		e.queueChain(d)
	}
	if err := e.nft.Flush(); err == nil {
		for _, d := range missing {
			e.hooked[cut.ChainName(d)] = true
		}
		return nil
	}
	for _, d := range missing {
		e.queueChain(d)
		if err := e.nft.Flush(); err != nil {
			e.chainRefused(d, err)
			continue
		}
		e.hooked[cut.ChainName(d)] = true
	}
	if err := queue(); err != nil {
		return err
	}
	return e.nft.Flush()
}

// removeChains detaches every chain of the table, each in its own batch.
// A chain that stays keeps its place in hooked, so no insert adds its
// rules twice.
func (e *Engine) removeChains() {
	e.chainFails = map[string]bool{}
	e.detachAllBut(nil)
}

// detachAllBut reads the table's chains, starts hooked again and detaches
// every chain not named in want (chain name -> device). It returns the
// chains it read, and false when they could not be read (it warns).
func (e *Engine) detachAllBut(want map[string]string) (map[string]*nftables.Chain, bool) {
	have, err := e.ourChains()
	if err != nil {
		e.warn("cut: list chains: " + err.Error())
		return nil, false
	}
	e.hooked = map[string]bool{}
	for name, c := range have {
		if _, ok := want[name]; !ok {
			e.detach(name, c)
		}
	}
	return have, true
}

// detach deletes one chain in its own batch; a chain the kernel keeps
// stays marked in hooked.
func (e *Engine) detach(name string, c *nftables.Chain) {
	e.nft.FlushChain(c)
	e.nft.DelChain(c)
	if err := e.nft.Flush(); err != nil {
		e.hooked[name] = true
		e.warn(fmt.Sprintf("cut: remove chain %s: %v", name, err))
	}
}

// rulesMatch reports whether the rules read back are the two cut rules
// of the current sets and expiry.
func (e *Engine) rulesMatch(rules []*nftables.Rule) bool {
	for i, r := range rules {
		set := []*nftables.Set{e.set4, e.set6}[i]
		released := []*nftables.Set{e.rel4, e.rel6}[i]
		var lookup, guard, dynset bool
		for _, x := range r.Exprs {
			switch x := x.(type) {
			case *expr.Lookup:
				if x.Invert {
					guard = x.SetName == released.Name
				} else {
					lookup = x.SetName == set.Name
				}
			case *expr.Dynset:
				dynset = x.SetName == set.Name && x.Timeout == e.cfg.Expiry && x.Operation == unix.NFT_DYNSET_OP_UPDATE
			}
		}
		if !lookup || !guard || !dynset || len(r.Exprs) != 11 {
			return false
		}
	}
	return true
}

// warn adds a warning for the summary once.
func (e *Engine) warn(msg string) {
	for _, w := range e.warnings {
		if w == msg {
			return
		}
	}
	e.warnings = append(e.warnings, msg)
}
