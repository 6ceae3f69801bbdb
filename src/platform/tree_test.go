package platform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree builds a root directory from path -> content. A content of
// "-> target" makes a symlink instead of a file.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "-> "); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// netdevFiles returns the sysfs files of one ethernet device.
func netdevFiles(name string, ifindex string, driver string) map[string]string {
	base := "sys/class/net/" + name + "/"
	files := map[string]string{
		base + "type":      "1\n",
		base + "ifindex":   ifindex + "\n",
		base + "iflink":    ifindex + "\n",
		base + "operstate": "up\n",
		base + "flags":     "0x1003\n",
		base + "uevent":    "INTERFACE=" + name + "\nIFINDEX=" + ifindex + "\n",
	}
	if driver != "" {
		files[base+"device/driver"] = "-> ../../../../bus/platform/drivers/" + driver
	}
	return files
}

func merge(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func deviceByName(t *testing.T, info Info, name string) Device {
	t.Helper()
	for _, d := range info.Devices {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("device %q not detected; have %v", name, deviceNames(info))
	return Device{}
}

func deviceNames(info Info) []string {
	var names []string
	for _, d := range info.Devices {
		names = append(names, d.Name)
	}
	return names
}
