//go:build linux

// Package labnet builds a client - router - server topology of network
// namespaces joined by veths, for the integration tests of the cut and of
// conntrack. The router masquerades towards the server, so a connection's
// reply tuple differs from its original one, as on a home router.
package labnet

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Addresses of the topology. The client sits behind lan0, the server
// behind wan0.
const (
	ClientV4    = "10.90.1.2"
	RouterLANV4 = "10.90.1.1"
	RouterWANV4 = "10.90.2.1"
	ServerV4    = "10.90.2.2"
	ClientV6    = "fd00:90:1::2"
	RouterLANV6 = "fd00:90:1::1"
	RouterWANV6 = "fd00:90:2::1"
	ServerV6    = "fd00:90:2::2"
)

// Lab is one instance of the topology; its namespaces carry a unique prefix.
type Lab struct {
	Client, Router, Server string // namespace names
	NAT                    bool   // masquerade on wan0
}

// Missing names what the test machine lacks to build a lab, or "" when
// nothing is missing.
func Missing() string {
	if os.Geteuid() != 0 {
		return "root (network namespaces)"
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "the " + tool + " command (iproute2/nftables)"
		}
	}
	return ""
}

// New builds the namespaces, veths, addresses and routes. With nat the
// router masquerades what leaves by wan0. Close removes everything. The
// namespace names carry the process id, so test binaries of several
// packages running at once never share one.
func New(prefix string, nat bool) (*Lab, error) {
	prefix += strconv.Itoa(os.Getpid()%100000) + "-"
	l := &Lab{Client: prefix + "c", Router: prefix + "r", Server: prefix + "s", NAT: nat}
	l.Close() // leftovers of an interrupted run
	steps := [][]string{
		{"ip", "netns", "add", l.Client},
		{"ip", "netns", "add", l.Router},
		{"ip", "netns", "add", l.Server},
		// Made from inside the router's namespace: Linux 6.12 checks the
		// name in the namespace the request comes from, so a lan0 of the
		// host (the VM lab's own topology) would refuse ours.
		{"ip", "-n", l.Router, "link", "add", "lan0", "type", "veth", "peer", "name", "c0", "netns", l.Client},
		{"ip", "-n", l.Router, "link", "add", "wan0", "type", "veth", "peer", "name", "s0", "netns", l.Server},
	}
	sh := func(ns, script string) []string { return []string{"ip", "netns", "exec", ns, "sh", "-ec", script} }
	steps = append(steps,
		sh(l.Client, "ip link set lo up; ip link set c0 up; ip addr add "+ClientV4+"/24 dev c0; ip -6 addr add "+ClientV6+"/64 dev c0 nodad; ip route add default via "+RouterLANV4+"; ip -6 route add default via "+RouterLANV6),
		sh(l.Server, "ip link set lo up; ip link set s0 up; ip addr add "+ServerV4+"/24 dev s0; ip -6 addr add "+ServerV6+"/64 dev s0 nodad; ip route add default via "+RouterWANV4+"; ip -6 route add default via "+RouterWANV6),
		sh(l.Router, "ip link set lo up; ip link set lan0 up; ip link set wan0 up; ip addr add "+RouterLANV4+"/24 dev lan0; ip addr add "+RouterWANV4+"/24 dev wan0; ip -6 addr add "+RouterLANV6+"/64 dev lan0 nodad; ip -6 addr add "+RouterWANV6+"/64 dev wan0 nodad; echo 1 > /proc/sys/net/ipv4/ip_forward; echo 1 > /proc/sys/net/ipv6/conf/all/forwarding"),
	)
	// A forward chain makes the router track connections even without NAT.
	rules := "table inet labnet {\n\tchain forward {\n\t\ttype filter hook forward priority 0; policy accept;\n\t\tct state new counter\n\t}\n}\n"
	if nat {
		rules += "table inet labnat {\n\tchain postrouting {\n\t\ttype nat hook postrouting priority 100; policy accept;\n\t\toifname \"wan0\" masquerade\n\t}\n}\n"
	}
	for _, s := range steps {
		if err := run(s, ""); err != nil {
			l.Close()
			return nil, err
		}
	}
	if err := run([]string{"ip", "netns", "exec", l.Router, "nft", "-f", "-"}, rules); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Close removes the namespaces (and with them the veths).
func (l *Lab) Close() {
	for _, ns := range []string{l.Client, l.Router, l.Server} {
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
}

// Exec runs a command in namespace ns and returns its combined output.
func (l *Lab) Exec(ns string, args ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s in %s: %v: %s", strings.Join(args, " "), ns, err, out)
	}
	return string(out), nil
}

// Nft applies an nft script in namespace ns.
func (l *Lab) Nft(ns, script string) error {
	return run([]string{"ip", "netns", "exec", ns, "nft", "-f", "-"}, script)
}

// In runs fn on an OS thread switched into namespace ns. Sockets fn opens
// stay in ns after it returns, so netlink clients and traffic sockets are
// created here and used from any goroutine.
func In(ns string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		// The thread is left locked and so dies with the goroutine: it never
		// returns to the pool in the wrong namespace.
		runtime.LockOSThread()
		fd, err := unix.Open("/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("open netns %s: %w", ns, err)
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("enter netns %s: %w", ns, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

func run(args []string, stdin string) error {
	cmd := exec.Command(args[0], args[1:]...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// RouteToServer makes every address of an IPv4 prefix one of the
// server's: the router routes the prefix to the server, which takes it as
// its own (a local route on lo, as for anycast). A test then has
// thousands of far ends without thousands of addresses to configure.
func (l *Lab) RouteToServer(prefix string) error {
	if err := run([]string{"ip", "-n", l.Server, "route", "replace", "local", prefix, "dev", "lo"}, ""); err != nil {
		return err
	}
	return run([]string{"ip", "-n", l.Router, "route", "replace", prefix, "via", ServerV4, "dev", "wan0"}, "")
}
