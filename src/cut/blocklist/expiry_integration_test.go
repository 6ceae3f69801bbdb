//go:build linux

package blocklist

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
)

// banIPLayout is banIP 1.8's table as its start leaves it (chains
// trimmed to what matters here): the allowlist's sets, its own
// blocklist.v4/.v6 with flags interval, timeout (its log monitor adds
// bans with a timeout when ban_nftexpiry is set), and a feed's set.
const banIPLayout = `table inet banIP {
	set allowlist.v4 { type ipv4_addr; flags interval; auto-merge; elements = { 192.0.2.10 } }
	set allowlist.v6 { type ipv6_addr; flags interval; auto-merge; }
	set blocklist.v4 { type ipv4_addr; flags interval, timeout; auto-merge; }
	set blocklist.v6 { type ipv6_addr; flags interval, timeout; auto-merge; }
	set cinsscore.v4 { type ipv4_addr; flags interval; auto-merge; elements = { 198.51.100.0/24 } }
	chain _inbound { ip saddr @allowlist.v4 accept; ip saddr @blocklist.v4 drop; ip saddr @cinsscore.v4 drop; }
	chain wan-input { type filter hook input priority -100; policy accept; jump _inbound; }
}
`

// crowdSecLayout is the firewall bouncer's tables on OpenWrt (its init
// script and the bouncer's nftables mode), with the hash set's GC put off
// for an hour: an expired ban is then still in the kernel, only hidden,
// and no DELSETELEM can come for it.
const crowdSecLayout = `table ip crowdsec {
	set crowdsec-blacklists { type ipv4_addr; flags timeout; gc-interval 1h; }
	chain crowdsec-chain-input { type filter hook input priority -10; policy accept; ip saddr @crowdsec-blacklists drop; }
}
table ip6 crowdsec6 {
	set crowdsec6-blacklists { type ipv6_addr; flags timeout; gc-interval 1h; }
	chain crowdsec6-chain-input { type filter hook input priority -10; policy accept; ip6 saddr @crowdsec6-blacklists drop; }
}
`

// presetRig runs a watch of one preset in a namespace of its own.
type presetRig struct {
	lab      *labnet.Lab
	w        *Watch
	released chan struct{}
}

func newPresetRig(t *testing.T, prefix, layout string, b cut.BlocklistConfig) *presetRig {
	t.Helper()
	if m := labnet.Missing(); m != "" {
		t.Skip("needs " + m)
	}
	lab, err := labnet.New(prefix, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lab.Close)
	if err := lab.Nft(lab.Router, layout); err != nil {
		t.Fatal(err)
	}
	cfg := cut.DefaultConfig()
	cfg.Blocklists = []cut.BlocklistConfig{b}
	if cfg, err = cfg.Normalized(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &presetRig{lab: lab, released: make(chan struct{}, 64)}
	if err := labnet.In(lab.Router, func() (err error) { r.w, err = Open(ctx, cfg, nil); return err }); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.w.Run(func() { r.released <- struct{}{} }) }()
	go func() { // Added is drained as the engine would
		for {
			if _, ok := r.w.Added(); !ok {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		r.w.Close()
	})
	return r
}

func (r *presetRig) nft(t *testing.T, script string) {
	t.Helper()
	if err := r.lab.Nft(r.lab.Router, script); err != nil {
		t.Fatal(err)
	}
}

func (r *presetRig) listed(addr string) (string, bool) {
	l, ok := r.w.Lists().Listed(flowTo(addr), nil)
	return l.Trigger, ok
}

// waitListed waits until addr is listed by the list named trigger (or,
// with want false, by none), and says how long that took.
func (r *presetRig) waitListed(t *testing.T, addr, trigger string, want bool) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < hang {
		got, ok := r.listed(addr)
		if ok == want && (!want || got == trigger) {
			return time.Since(start)
		}
		time.Sleep(10 * time.Millisecond)
	}
	got, ok := r.listed(addr)
	t.Fatalf("%s: listed %v by %q after %v, want listed %v by %q; lists: %+v", addr, ok, got, hang, want, trigger, r.w.Lists().Report())
	return 0
}

// ban adds addr to a set with a timeout, as the tool does, and returns
// when the ban expires in the kernel at the earliest (the timeout runs
// from the commit, some time after nft started), so a delay measured from
// it is an upper bound.
func (r *presetRig) ban(t *testing.T, family, table, set, addr string, timeout time.Duration) time.Time {
	t.Helper()
	start := time.Now()
	if _, err := r.lab.Exec(r.lab.Router, "nft", "add", "element", family, table, set, "{ "+addr+" timeout "+timeout.String()+" }"); err != nil {
		t.Fatal(err)
	}
	return start.Add(timeout)
}

// waitReleased waits for the expired ban of addr to leave the lists and
// logs how long after its expiry that was.
func (r *presetRig) waitReleased(t *testing.T, addr string, expiry time.Time) time.Duration {
	t.Helper()
	r.waitListed(t, addr, "", false)
	late := time.Since(expiry)
	t.Logf("%s released %v after its ban expired", addr, late.Round(time.Millisecond))
	if late < 0 {
		t.Errorf("%s released %v before its ban expired", addr, -late)
	}
	if late > 3*time.Second {
		t.Errorf("%s released %v after its ban expired, want within a second or so", addr, late)
	}
	return late
}

// ruleHandle is the handle of the rule of banIP's chain that uses set.
func (r *presetRig) ruleHandle(t *testing.T, chain, set string) string {
	t.Helper()
	out, err := r.lab.Exec(r.lab.Router, "nft", "-a", "list", "chain", "inet", "banIP", chain)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); strings.Contains(line, set+" ") && len(f) > 2 && f[len(f)-2] == "handle" {
			return f[len(f)-1]
		}
	}
	t.Fatalf("no rule of chain %s uses %s: %s", chain, set, out)
	return ""
}

func (r *presetRig) reportNames() []string {
	var names []string
	for _, b := range r.w.Lists().Report() {
		names = append(names, b.Name)
	}
	return names
}

func (r *presetRig) entries(name string) int {
	for _, b := range r.w.Lists().Report() {
		if b.Name == name {
			return b.Entries
		}
	}
	return -1
}

// TestIntegrationBanIPExpiredBanReleased: type banip follows banIP 1.8's
// feed sets, both families, not the allowlist's; a ban its log monitor
// adds with a timeout is listed, and released once the kernel expired it
// (measured and logged); a feed's reload (flush set, delete set, add set
// in one nft -f) swaps its content; a feed set made later is followed,
// one deleted is dropped.
func TestIntegrationBanIPExpiredBanReleased(t *testing.T) {
	r := newPresetRig(t, "fpbx", banIPLayout, cut.BlocklistConfig{Name: "banip", Kind: cut.KindBanIP})
	if got := strings.Join(r.reportNames(), " "); got != "banip/blocklist.v4 banip/blocklist.v6 banip/cinsscore.v4" {
		t.Errorf("lists %q, want banIP's block sets and not its allowlist's", got)
	}
	r.waitListed(t, "198.51.100.7", "blocklist:banip/cinsscore.v4", true)
	if _, ok := r.listed("192.0.2.10"); ok {
		t.Error("an allowlisted address is listed")
	}

	exp4 := r.ban(t, "inet", "banIP", "blocklist.v4", "203.0.113.9", 3*time.Second)
	exp6 := r.ban(t, "inet", "banIP", "blocklist.v6", "2001:db8::9", 2*time.Second)
	r.waitListed(t, "203.0.113.9", "blocklist:banip/blocklist.v4", true)
	r.waitListed(t, "2001:db8::9", "blocklist:banip/blocklist.v6", true)
	if n := r.entries("banip/blocklist.v4"); n != 1 {
		t.Errorf("blocklist.v4 entries %d, want 1", n)
	}
	r.waitReleased(t, "2001:db8::9", exp6)
	r.waitReleased(t, "203.0.113.9", exp4)
	if n := r.entries("banip/blocklist.v4"); n != 0 {
		t.Errorf("blocklist.v4 entries %d after the ban expired, want 0", n)
	}
	select {
	case <-r.released:
	default:
		t.Error("removed was not called for the expired bans")
	}
	out, _ := r.lab.Exec(r.lab.Router, "nft", "list", "set", "inet", "banIP", "blocklist.v4")
	if strings.Contains(out, "203.0.113.9") {
		t.Errorf("nft still lists the expired ban: %s", out)
	}

	// banIP's reload of one feed, in one transaction: the rules that use
	// the set by handle, the set flushed and deleted, made again, its rule.
	r.nft(t, "delete rule inet banIP _inbound handle "+r.ruleHandle(t, "_inbound", "@cinsscore.v4")+"\n"+
		"flush set inet banIP cinsscore.v4\ndelete set inet banIP cinsscore.v4\n"+
		"add set inet banIP cinsscore.v4 { type ipv4_addr; flags interval; auto-merge; elements = { 198.51.100.0/25, 203.0.113.128/25 } }\n"+
		"add rule inet banIP _inbound ip saddr @cinsscore.v4 drop\n")
	r.waitListed(t, "203.0.113.200", "blocklist:banip/cinsscore.v4", true)
	r.waitListed(t, "198.51.100.200", "", false)
	r.waitListed(t, "198.51.100.7", "blocklist:banip/cinsscore.v4", true)

	// A feed switched on, then off.
	r.nft(t, "add set inet banIP hagezi.v4 { type ipv4_addr; flags interval; auto-merge; elements = { 100.64.9.0/24 } }\n")
	r.waitListed(t, "100.64.9.1", "blocklist:banip/hagezi.v4", true)
	r.nft(t, "flush set inet banIP hagezi.v4\ndelete set inet banIP hagezi.v4\n")
	r.waitListed(t, "100.64.9.1", "", false)
	if got := strings.Join(r.reportNames(), " "); strings.Contains(got, "hagezi") {
		t.Errorf("lists %q after the feed's set was deleted", got)
	}

	// banIP's restart: the table goes, and comes back with its sets.
	r.nft(t, "delete table inet banIP\n")
	r.waitListed(t, "198.51.100.7", "", false)
	if got := r.w.Lists().Report(); len(got) != 1 || got[0].Name != "banip" || len(got[0].Errors) == 0 {
		t.Errorf("report with banIP's table gone: %+v", got)
	}
	r.nft(t, banIPLayout)
	r.waitListed(t, "198.51.100.7", "blocklist:banip/cinsscore.v4", true)
	exp := r.ban(t, "inet", "banIP", "blocklist.v4", "203.0.113.10", 2*time.Second)
	r.waitListed(t, "203.0.113.10", "blocklist:banip/blocklist.v4", true)
	r.waitReleased(t, "203.0.113.10", exp)
}

// TestIntegrationCrowdSecExpiredBanReleased: type crowdsec follows the
// bouncer's two sets; a decision's ban, added with its duration as the
// bouncer does, is released once it expired though the set's GC has not
// run (the dump hides an expired element; no DELSETELEM comes); the
// bouncer's restart (its tables deleted and made again) is followed.
func TestIntegrationCrowdSecExpiredBanReleased(t *testing.T) {
	r := newPresetRig(t, "fpcx", crowdSecLayout, cut.BlocklistConfig{Name: "crowdsec", Kind: cut.KindCrowdSec})
	if got := strings.Join(r.reportNames(), " "); got != "crowdsec/crowdsec-blacklists crowdsec/crowdsec6-blacklists" {
		t.Errorf("lists %q", got)
	}
	long := r.ban(t, "ip", "crowdsec", "crowdsec-blacklists", "198.51.100.1", time.Hour)
	exp4 := r.ban(t, "ip", "crowdsec", "crowdsec-blacklists", "203.0.113.9", 3*time.Second)
	exp6 := r.ban(t, "ip6", "crowdsec6", "crowdsec6-blacklists", "2001:db8::9", 3*time.Second)
	r.waitListed(t, "203.0.113.9", "blocklist:crowdsec/crowdsec-blacklists", true)
	r.waitListed(t, "2001:db8::9", "blocklist:crowdsec/crowdsec6-blacklists", true)
	r.waitReleased(t, "203.0.113.9", exp4)
	r.waitReleased(t, "2001:db8::9", exp6)
	if _, ok := r.listed("198.51.100.1"); !ok || time.Now().After(long) {
		t.Error("the hour-long ban is no longer listed")
	}
	// Still in the kernel, expired: a get does not find it either.
	if out, err := r.lab.Exec(r.lab.Router, "nft", "get", "element", "ip", "crowdsec", "crowdsec-blacklists", "{ 203.0.113.9 }"); err == nil {
		t.Errorf("nft get finds the expired element: %s", out)
	}

	// The bouncer's restart.
	r.nft(t, "delete table ip crowdsec\ndelete table ip6 crowdsec6\n")
	r.waitListed(t, "198.51.100.1", "", false)
	r.nft(t, crowdSecLayout)
	exp := r.ban(t, "ip", "crowdsec", "crowdsec-blacklists", "203.0.113.11", 2*time.Second)
	r.waitListed(t, "203.0.113.11", "blocklist:crowdsec/crowdsec-blacklists", true)
	r.waitReleased(t, "203.0.113.11", exp)
}
