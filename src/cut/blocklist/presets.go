package blocklist

import (
	"fmt"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

// A preset follows every block set of another tool, as the tool makes
// and drops them, with no section per set: each set becomes a list of its
// own, named after the section and the set ("banip/cinsscore.v4"), made
// when the set appears (at Open, on a NEWSET) and dropped when the set
// goes and the transaction did not make it again.
type preset struct {
	cfg    cut.BlocklistConfig
	tables []presetTable
}

// presetTable is a table a preset looks in, and which of its sets block.
type presetTable struct {
	family, table string
	blocks        func(set string) bool
}

// maxPresetSets bounds the sets one preset follows (each bounded by
// MaxListEntries): banIP makes two per feed, and one per country or ASN
// and family when it splits them.
const maxPresetSets = 128

func presetOf(b cut.BlocklistConfig) (*preset, bool) {
	switch b.Kind {
	case cut.KindBanIP:
		return &preset{cfg: b, tables: []presetTable{{"inet", "banIP", banIPBlockSet}}}, true
	case cut.KindCrowdSec:
		// The bouncer's defaults (blacklists_ipv4, blacklists_ipv6 and
		// nftables.ipv4/ipv6.table), which OpenWrt's package keeps.
		return &preset{cfg: b, tables: []presetTable{
			{"ip", "crowdsec", named("crowdsec-blacklists")},
			{"ip6", "crowdsec6", named("crowdsec6-blacklists")},
		}}, true
	}
	return nil, false
}

func named(name string) func(string) bool {
	return func(set string) bool { return set == name }
}

// banIPBlockSet reports whether a set of banIP 1.8's table is one it
// blocks with: a feed's sets are <feed>.v4 and <feed>.v6 (country.de.v4
// when banIP splits countries; blocklist.v4 holds its own and its log
// monitor's bans), the allowlist's are allowlist.v4, allowlist.local.v4
// and their .v6, and the .v4MAC/.v6MAC sets pair a MAC with an address.
func banIPBlockSet(set string) bool {
	feed, ok := strings.CutSuffix(set, ".v4")
	if !ok {
		feed, ok = strings.CutSuffix(set, ".v6")
	}
	if !ok || feed == "" {
		return false
	}
	first, _, _ := strings.Cut(feed, ".")
	return first != "allowlist"
}

// childName names the list of one set a preset follows.
func (p *preset) childName(set string) string { return p.cfg.Name + "/" + set }

// child is the list of one set the preset follows.
func (p *preset) child(t presetTable, set string, minBits [2]int) *listState {
	l := newListState(cut.BlocklistConfig{Name: p.childName(set), Kind: p.cfg.Kind, Family: t.family, Table: t.table, Set: set})
	l.minBits, l.parent = minBits, p
	return l
}

// source says what the preset follows.
func (p *preset) source() string {
	var parts []string
	for _, t := range p.tables {
		what := "every <feed>.v4 and <feed>.v6 set but the allowlist's"
		if p.cfg.Kind == cut.KindCrowdSec {
			what = strings.TrimPrefix(t.table, "crowdsec") // "" or "6"
			what = "crowdsec" + what + "-blacklists"
		}
		parts = append(parts, t.family+" "+t.table+" "+what)
	}
	return strings.Join(parts, ", ")
}

// waiting is the report of a preset none of whose sets exists.
func (p *preset) waiting() string {
	return fmt.Sprintf("no set of %s exists (%s): watching for them; connections are cut once one lists them", p.cfg.Kind, p.source())
}

// tooMany is the problem of a set left unfollowed.
func (p *preset) tooMany(set string) string {
	return fmt.Sprintf("blocklist %s: more than %d sets: %s is not followed", p.cfg.Name, maxPresetSets, set)
}

// children counts the lists of p's sets. The caller holds the lists.
func childCount(byName map[string]*listState, p *preset) int {
	n := 0
	for _, l := range byName {
		if l.parent == p {
			n++
		}
	}
	return n
}
