package observe

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fw4Router is firewall4's ruleset for a lan and a wan zone, reduced to
// what the digest reads: vmaps, jumps, a limit, rejects, MSS clamping, NAT
// and the input and output chains it must leave out. %s is an extra rule
// of forward_wan, %s one of input_wan.
const fw4Router = `table inet fw4
delete table inet fw4
table inet fw4 {
	chain input {
		type filter hook input priority filter; policy drop;
		iifname "lo" accept
		ct state vmap { established : accept, related : accept }
		tcp flags syn / fin,syn,rst,ack jump syn_flood
		iifname "wan" jump input_wan
		jump handle_reject
	}
	chain forward {
		type filter hook forward priority filter; policy drop;
		ct state vmap { established : accept, related : accept }
		iifname "lan" jump forward_lan
		iifname "wan" jump forward_wan
		jump handle_reject
	}
	chain output { type filter hook output priority filter; policy accept; oifname "lo" accept; }
	chain handle_reject { meta l4proto tcp reject with tcp reset; reject; }
	chain syn_flood { limit rate 25/second burst 50 packets return; drop; }
	chain input_wan { udp dport 68 counter accept; %s jump handle_reject; }
	chain forward_lan { oifname "wan" counter accept; }
	chain forward_wan {
		meta nfproto ipv6 icmpv6 type { destination-unreachable, time-exceeded, packet-too-big } counter accept
		%s
		tcp dport { 22, 5201 } counter accept
		jump handle_reject
	}
	chain srcnat { type nat hook postrouting priority srcnat; policy accept; oifname "wan" masquerade; }
	chain mangle_forward {
		type filter hook forward priority mangle; policy accept;
		oifname "wan" tcp flags syn tcp option maxseg size set rt mtu
	}
}
`

// firewall4's ruleset as the kernel dumps it: a re-render (new handles,
// counters, anonymous sets numbered anew) keeps the digest, a rule in a
// chain the forward path reaches or an element of an anonymous set
// changes it, an input rule does not; no table is no digest.
func TestIntegrationFirewallDigest(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates a network namespace")
	}
	ns := fmt.Sprintf("fastpath-fw4-%d", os.Getpid())
	ipCmd(t, "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	fd, err := unix.Open("/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if fr := ReadFirewallRules(fd); fr.Present || fr.Digest != "" || fr.Error != "" {
		t.Fatalf("no table inet fw4: %+v, want absent and no digest", fr)
	}
	load := func(forwardRule, inputRule, ports string) FirewallRules {
		t.Helper()
		text := fmt.Sprintf(fw4Router, inputRule, forwardRule)
		text = strings.Replace(text, "{ 22, 5201 }", ports, 1)
		cmd := exec.Command("ip", "netns", "exec", ns, "nft", "-f", "-")
		cmd.Stdin = strings.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("nft -f: %v: %s", err, out)
		}
		fr := ReadFirewallRules(fd)
		if fr.Error != "" || fr.Digest == "" {
			t.Fatalf("reading table inet fw4: %+v", fr)
		}
		return fr
	}
	base := load("", "", "{ 22, 5201 }")
	// forward, forward_lan, forward_wan, handle_reject, mangle_forward;
	// not input, input_wan, syn_flood, output or srcnat (NAT).
	if base.Chains != 5 || base.Rules != 11 {
		t.Errorf("reached %d chains, %d rules; want 5 chains, 11 rules", base.Chains, base.Rules)
	}
	for _, c := range []struct {
		name                string
		forward, input, set string
		same                bool
	}{
		{"re-rendered", "", "", "{ 22, 5201 }", true},
		{"anonymous set elements in another order", "", "", "{ 5201, 22 }", true},
		{"a rule for the router's own input", "", "tcp dport 2222 accept;", "{ 22, 5201 }", true},
		{"a drop rule in forward_wan", "ip saddr 192.0.2.7 counter drop", "", "{ 22, 5201 }", false},
		{"a port added to an anonymous set", "", "", "{ 22, 443, 5201 }", false},
	} {
		got := load(c.forward, c.input, c.set)
		if (got.Digest == base.Digest) != c.same {
			t.Errorf("%s: digest %s, base %s (want same: %v)", c.name, got.Digest, base.Digest, c.same)
		}
	}
}
