package observe

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// SQM's root qdisc on a device, as sqm-scripts' simple.qos sets it up
// (htb) and as piece_of_cake.qos does (cake, where the kernel has it).
func TestIntegrationRootQdiscs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates a network namespace")
	}
	ns := fmt.Sprintf("fastpath-qdisc-%d", os.Getpid())
	ipCmd(t, "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	ipCmd(t, "-n", ns, "link", "add", "wan", "type", "veth", "peer", "lan")
	ipCmd(t, "-n", ns, "link", "set", "wan", "up")
	ipCmd(t, "-n", ns, "link", "set", "lan", "up")
	if out, err := exec.Command("ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", "wan", "root", "handle", "1:", "htb", "default", "10").CombinedOutput(); err != nil {
		t.Fatalf("tc qdisc replace dev wan root htb: %v: %s", err, out)
	}
	fd, err := unix.Open("/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	qdiscs, err := RootQdiscs(fd)
	if err != nil {
		t.Fatal(err)
	}
	index := func(name string) int {
		out, err := exec.Command("ip", "netns", "exec", ns, "cat", "/sys/class/net/"+name+"/ifindex").Output()
		if err != nil {
			t.Fatalf("ifindex of %s: %v", name, err)
		}
		var i int
		fmt.Sscan(string(out), &i)
		return i
	}
	if got := qdiscs[index("wan")]; got != "htb" {
		t.Errorf("root qdisc of wan: %q, want htb (all: %v)", got, qdiscs)
	}
	if got := qdiscs[index("lan")]; got == "htb" || got == "" {
		// veth gets noqueue by default: listed, and not a shaper
		t.Errorf("root qdisc of lan: %q, want the default (noqueue), not none or htb", got)
	}
}
