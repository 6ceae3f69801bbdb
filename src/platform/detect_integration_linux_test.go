package platform

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TestIntegrationDetectThisMachine runs Detect on the machine itself.
func TestIntegrationDetectThisMachine(t *testing.T) {
	info, err := Detect("/")
	if err != nil {
		t.Fatal(err)
	}
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		t.Fatal(err)
	}
	if want := unix.ByteSliceToString(uts.Release[:]); info.Kernel != want {
		t.Errorf("kernel %q, uname says %q", info.Kernel, want)
	}
	lo := deviceByName(t, info, "lo")
	if lo.Kind != KindLoopback || lo.Type != arphrdLoopback || lo.IfIndex != 1 || !lo.OperUp {
		t.Errorf("lo = %+v, want an up loopback with ifindex 1", lo)
	}
	// Every interface the kernel lists must be there, and nothing else.
	// Other tests may add and remove links meanwhile: retry a few times.
	var got, want []string
	for try := 0; try < 5; try++ {
		if try > 0 {
			time.Sleep(100 * time.Millisecond)
			if info, err = Detect("/"); err != nil {
				t.Fatal(err)
			}
		}
		ifaces, err := netlink.LinkList()
		if err != nil {
			t.Fatal(err)
		}
		want = want[:0]
		for _, l := range ifaces {
			want = append(want, l.Attrs().Name)
		}
		sort.Strings(want)
		if got = deviceNames(info); strings.Join(got, " ") == strings.Join(want, " ") {
			break
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("devices %v, kernel has %v", got, want)
	}
	if info.SoC == "" || info.HWOffloadReason == "" {
		t.Errorf("soc=%q reason=%q", info.SoC, info.HWOffloadReason)
	}
}

// TestIntegrationDetectNetns builds a bridge, a veth pair and a VLAN in a
// fresh network namespace, mounts that namespace's sysfs under a temporary
// root and checks Detect reads the kernel's own layout as the fixtures do.
func TestIntegrationDetectNetns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates a network namespace and mounts sysfs")
	}
	root := t.TempDir()
	sysDir := filepath.Join(root, "sys")
	if err := os.Mkdir(sysDir, 0o755); err != nil {
		t.Fatal(err)
	}

	type result struct {
		info             Info
		err              error
		vlanErr, ipipErr error // optional kernel features
	}
	done := make(chan result)
	go func() {
		// The thread stays locked and dies with the goroutine, so the
		// namespace never leaks into other goroutines.
		runtime.LockOSThread()
		var res result
		defer func() { done <- res }()
		if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
			res.err = err
			return
		}
		if res.err = buildLinks(); res.err != nil {
			return
		}
		res.vlanErr = addVLAN()
		res.ipipErr = netlink.LinkAdd(&netlink.Iptun{LinkAttrs: netlink.LinkAttrs{Name: "ipip-t"},
			Local: []byte{192, 0, 2, 1}, Remote: []byte{198, 51, 100, 2}})
		if res.ipipErr == nil {
			l, _ := netlink.LinkByName("ipip-t")
			_ = netlink.LinkSetUp(l)
		}
		if err := syscall.Mount("sysfs", sysDir, "sysfs", 0, ""); err != nil {
			res.err = err
			return
		}
		defer syscall.Unmount(sysDir, syscall.MNT_DETACH)
		res.info, res.err = Detect(root)
	}()
	res := <-done
	if res.err != nil {
		t.Fatalf("namespace setup or Detect: %v", res.err)
	}
	info := res.info

	if d := deviceByName(t, info, "lo"); d.Kind != KindLoopback || !d.OperUp {
		t.Errorf("lo = %+v", d)
	}
	br := deviceByName(t, info, "br0")
	if br.Kind != KindBridge || strings.Join(br.Lower, ",") != "veth0" {
		t.Errorf("br0 = %+v, want a bridge with lower [veth0]", br)
	}
	v0 := deviceByName(t, info, "veth0")
	if v0.Kind != KindEther || v0.Master != "br0" || v0.Driver != "" || strings.Join(v0.Upper, ",") != "br0" {
		t.Errorf("veth0 = %+v, want an ether port of br0", v0)
	}
	if d := deviceByName(t, info, "veth1"); d.Kind != KindEther || !d.OperUp || d.Master != "" {
		t.Errorf("veth1 = %+v, want an up ether device outside the bridge", d)
	}
	if d := deviceByName(t, info, "vdown0"); d.Kind != KindEther || d.OperUp {
		t.Errorf("vdown0 = %+v, want a down ether device", d)
	}
	t.Run("vlan", func(t *testing.T) {
		if res.vlanErr != nil {
			t.Skipf("kernel has no 802.1Q VLANs (CONFIG_VLAN_8021Q): %v", res.vlanErr)
		}
		vlan := deviceByName(t, info, "veth1.100")
		if vlan.Kind != KindVLAN || strings.Join(vlan.Lower, ",") != "veth1" {
			t.Errorf("veth1.100 = %+v, want a vlan on veth1", vlan)
		}
	})
	t.Run("ipip", func(t *testing.T) {
		if res.ipipErr != nil {
			t.Skipf("kernel has no IPIP tunnels (CONFIG_NET_IPIP): %v", res.ipipErr)
		}
		if d := deviceByName(t, info, "ipip-t"); d.Kind != KindIPIP || d.Type != arphrdIPIP || !d.OperUp {
			t.Errorf("ipip-t = %+v, want an up ipip device", d)
		}
	})
}

// buildLinks runs inside the new namespace.
func buildLinks() error {
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return err
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		return err
	}
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "veth0"}, PeerName: "veth1"}); err != nil {
		return fmt.Errorf("veth (CONFIG_VETH): %w", err)
	}
	if err := netlink.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}); err != nil {
		return fmt.Errorf("bridge (CONFIG_BRIDGE): %w", err)
	}
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "vdown0"}, PeerName: "vdown1"}); err != nil {
		return fmt.Errorf("veth vdown0: %w", err)
	}
	br, err := netlink.LinkByName("br0")
	if err != nil {
		return err
	}
	v0, err := netlink.LinkByName("veth0")
	if err != nil {
		return err
	}
	v1, err := netlink.LinkByName("veth1")
	if err != nil {
		return err
	}
	if err := netlink.LinkSetMaster(v0, br); err != nil {
		return err
	}
	for _, l := range []netlink.Link{br, v0, v1} {
		if err := netlink.LinkSetUp(l); err != nil {
			return err
		}
	}
	return nil
}

// addVLAN adds veth1.100; the kernel may lack 802.1Q support.
func addVLAN() error {
	v1, err := netlink.LinkByName("veth1")
	if err != nil {
		return err
	}
	return netlink.LinkAdd(&netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: "veth1.100", ParentIndex: v1.Attrs().Index}, VlanId: 100})
}
