package observe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	for release, want := range map[string]Version{
		"6.12.43+deb12-amd64": {6, 12}, "6.6.73": {6, 6}, "7.2.13+deb14-amd64": {7, 2}, "5.15.167-rc1": {5, 15},
	} {
		if got, ok := ParseVersion(release); !ok || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", release, got, ok, want)
		}
	}
	if _, ok := ParseVersion("garbage"); ok {
		t.Error("garbage parsed as a version")
	}
}

func writeConfig(t *testing.T, root, release, text string) {
	t.Helper()
	os.MkdirAll(filepath.Join(root, "boot"), 0o755)
	if err := os.WriteFile(filepath.Join(root, "boot", "config-"+release), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestKernelFeaturesFromConfig(t *testing.T) {
	root := t.TempDir()
	writeConfig(t, root, "6.19.4", "CONFIG_NF_TABLES_NETDEV=y\n# CONFIG_NF_FLOW_TABLE is not set\n")
	k := KernelFeatures(root, "6.19.4")
	if k.Flowtable || !k.NetdevTable || !k.IPIPRxAccel || !k.CTDeleteOffloaded {
		t.Fatalf("features = %+v", k)
	}
	if len(k.Missing) != 1 || !strings.Contains(k.Missing[0], "CONFIG_NF_FLOW_TABLE") || !strings.Contains(k.Missing[0], "kmod-nft-offload") {
		t.Fatalf("missing = %q, want one sentence naming CONFIG_NF_FLOW_TABLE and kmod-nft-offload", k.Missing)
	}
}

func TestKernelFeaturesFromOpenWrtModules(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "lib/modules/6.6.73")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "nf_flow_table.ko"), nil, 0o644)
	k := KernelFeatures(root, "6.6.73")
	if !k.Flowtable || k.IPIPRxAccel || !k.CTDeleteOffloaded || len(k.Missing) != 0 {
		t.Fatalf("features = %+v", k)
	}
	os.Remove(filepath.Join(dir, "nf_flow_table.ko"))
	os.WriteFile(filepath.Join(dir, "nf_conntrack.ko"), nil, 0o644)
	if k := KernelFeatures(root, "6.6.73"); k.Flowtable {
		t.Fatal("flowtable reported without nf_flow_table.ko")
	}
}

func TestKernelFeaturesOld(t *testing.T) {
	k := KernelFeatures(t.TempDir(), "5.15.150")
	if k.IPIPRxAccel || k.CTDeleteOffloaded {
		t.Fatalf("5.15 features = %+v", k)
	}
}
