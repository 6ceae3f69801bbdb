package observe

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A second WAN and a policy rule for the peer, as mwan3 or pbr make them:
//
//	ip rule add to 198.51.100.2 lookup 100
//	ip route add default via 10.0.4.254 dev wan1 table 100
func TestIntegrationKernelRouteAppliesPolicyRules(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates a network namespace")
	}
	ns := fmt.Sprintf("fastpath-route-%d", os.Getpid())
	ipCmd(t, "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	for _, args := range [][]string{
		{"link", "add", "wan0", "type", "veth", "peer", "wan0p"}, {"link", "set", "wan0", "up"}, {"link", "set", "wan0p", "up"},
		{"addr", "add", "10.0.2.1/24", "dev", "wan0"}, {"route", "add", "default", "via", "10.0.2.254"},
		{"link", "add", "wan1", "type", "veth", "peer", "wan1p"}, {"link", "set", "wan1", "up"}, {"link", "set", "wan1p", "up"},
		{"addr", "add", "10.0.4.1/24", "dev", "wan1"},
		{"route", "add", "default", "via", "10.0.4.254", "dev", "wan1", "table", "100"},
	} {
		ipCmd(t, append([]string{"-n", ns}, args...)...)
	}
	fd, err := unix.Open("/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	peer := netip.MustParseAddr("198.51.100.2")

	rt, err := KernelRoute(fd, peer, netip.Addr{})
	if err != nil || rt.Device != "wan0" || rt.Table != unix.RT_TABLE_MAIN {
		t.Fatalf("without a rule: %+v, %v; want wan0 from the main table", rt, err)
	}
	ipCmd(t, "-n", ns, "rule", "add", "to", peer.String(), "lookup", "100")
	for _, src := range []string{"", "10.0.2.1", "192.0.2.9"} { // none, local, not (yet) local
		var s netip.Addr
		if src != "" {
			s = netip.MustParseAddr(src)
		}
		rt, err = KernelRoute(fd, peer, s)
		if err != nil || rt.Device != "wan1" || rt.Table != 100 || rt.Gateway != netip.MustParseAddr("10.0.4.254") {
			t.Fatalf("from %q with the rule: %+v, %v; want wan1 via 10.0.4.254, table 100", src, rt, err)
		}
	}
	if _, err := KernelRoute(fd, netip.MustParseAddr("2001:db8::1"), netip.Addr{}); err == nil {
		t.Fatal("a route to an IPv6 address in a namespace without IPv6 routes: no error")
	}
}

func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}
