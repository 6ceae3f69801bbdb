package observe

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// The flowtable follows ipip tunnels both ways (ipip_fill_forward_path)
// from Linux 6.19, and ip6tnl tunnels (ip6_tnl_fill_forward_path) from
// 7.0 — as if they carried IPv6: IPv4 inside (DS-Lite, MAP-E) was posted
// for nf-next in May 2026 and is not in 7.2.13. Deleting an offloaded
// conntrack entry works from 6.4.
var (
	ipipRxAccelSince       = Version{6, 19}
	ip6tnlPathSince        = Version{7, 0}
	ctDeleteOffloadedSince = Version{6, 4}
)

// Version is a kernel release's major and minor number.
type Version struct{ Major, Minor int }

// ParseVersion reads "6.12.43+deb12-amd64" as 6.12.
func ParseVersion(release string) (Version, bool) {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return Version{}, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minorDigits := parts[1]
	if i := strings.IndexFunc(minorDigits, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minorDigits = minorDigits[:i]
	}
	minor, err2 := strconv.Atoi(minorDigits)
	if err1 != nil || err2 != nil {
		return Version{}, false
	}
	return Version{major, minor}, true
}

// AtLeast reports whether v is the same as or newer than o.
func (v Version) AtLeast(o Version) bool {
	return v.Major > o.Major || (v.Major == o.Major && v.Minor >= o.Minor)
}

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// KernelFeatures reports what the running kernel offers, from the kernel
// config when /boot/config-<release> exists and from the module tree
// otherwise. /proc/config.gz is not read: OpenWrt builds rarely have it,
// and its gzip reader cost the binary more than its flash budget allows.
// Apply has the final word: a feature found here can still be refused, and
// one we cannot see (no config, no module tree) is assumed present.
func KernelFeatures(root, release string) netstate.KernelFeatures {
	k := netstate.KernelFeatures{Release: release, Flowtable: true, NetdevTable: true}
	if cfg := readKernelConfig(root, release); cfg != nil {
		k.Flowtable = cfg["CONFIG_NF_FLOW_TABLE"] == "y" || cfg["CONFIG_NF_FLOW_TABLE"] == "m"
		// NF_TABLES_NETDEV is a bool inside nf_tables, never a module.
		k.NetdevTable = cfg["CONFIG_NF_TABLES_NETDEV"] == "y"
	} else if mods := moduleIndex(root, release); len(mods) > 0 {
		k.Flowtable = mods["nf_flow_table"] || dirExists(filepath.Join(root, "sys/module/nf_flow_table"))
	}
	if !k.Flowtable {
		k.Missing = append(k.Missing, "no flowtable: CONFIG_NF_FLOW_TABLE is not set and module nf_flow_table is not installed (OpenWrt: opkg install kmod-nft-offload)")
	}
	if !k.NetdevTable {
		k.Missing = append(k.Missing, "no netdev tables for the verdict cut: CONFIG_NF_TABLES_NETDEV is not set (OpenWrt: opkg install kmod-nft-netdev)")
	}
	if v, ok := ParseVersion(release); ok {
		k.IPIPRxAccel = v.AtLeast(ipipRxAccelSince)
		k.IP6TnlPath = v.AtLeast(ip6tnlPathSince)
		k.CTDeleteOffloaded = v.AtLeast(ctDeleteOffloadedSince)
	}
	return k
}

// readKernelConfig parses /boot/config-<release> into symbol -> value, or nil.
func readKernelConfig(root, release string) map[string]string {
	if release == "" {
		return nil
	}
	f, err := os.Open(filepath.Join(root, "boot", "config-"+release))
	if err != nil {
		return nil
	}
	defer f.Close()
	cfg := map[string]string{}
	sc := bufio.NewScanner(io.LimitReader(f, 8<<20))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && strings.HasPrefix(k, "CONFIG_") {
			cfg[k] = v
		}
	}
	return cfg
}

// moduleIndex lists module names found under /lib/modules/<release>: the
// .ko files (OpenWrt keeps them flat) and modules.builtin.
func moduleIndex(root, release string) map[string]bool {
	mods := map[string]bool{}
	if release == "" {
		return mods
	}
	dir := filepath.Join(root, "lib/modules", release)
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			return nil
		}
		if name == "modules.builtin" {
			if data, err := os.ReadFile(path); err == nil {
				for _, l := range strings.Split(string(data), "\n") {
					mods[moduleName(filepath.Base(l))] = true
				}
			}
			return nil
		}
		if i := strings.Index(name, ".ko"); i > 0 {
			mods[moduleName(name)] = true
		}
		return nil
	})
	return mods
}

func moduleName(file string) string {
	if i := strings.Index(file, ".ko"); i > 0 {
		file = file[:i]
	}
	return strings.ReplaceAll(file, "-", "_")
}

func dirExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
