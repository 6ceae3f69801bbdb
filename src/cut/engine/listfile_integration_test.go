//go:build linux

package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

// TestIntegrationListFileSafety: whatever sits at a block-list path, the
// watch reads on and the engine answers: a FIFO (which an open would
// block on for good) and a device are refused by name, a symlink a user
// made to a root-only file is refused, and the lines of a file not
// everyone may read are never quoted.
func TestIntegrationListFileSafety(t *testing.T) {
	r := newRig(t, "fplf", testConfig())
	dir := t.TempDir()
	fifo, dev, link, secret, private := filepath.Join(dir, "fifo"), filepath.Join(dir, "dev"), filepath.Join(dir, "link"), filepath.Join(dir, "shadow"), filepath.Join(dir, "private")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", dev); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("root:secret-hash:19000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(private, []byte("private-text\n192.0.2.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	for _, p := range []string{fifo, dev, link, private} {
		cfg.Blocklists = append(cfg.Blocklists, cut.BlocklistConfig{Name: filepath.Base(p), Kind: cut.KindFile, Path: p})
	}
	r.watch(t, cfg) // fails unless every list was read
	errs := map[string]string{}
	for _, bl := range r.eng.Summary().Blocklists {
		errs[bl.Name] = strings.Join(bl.Errors, "; ")
		if strings.Contains(errs[bl.Name], "secret") || strings.Contains(errs[bl.Name], "private-text") {
			t.Errorf("%s: a file not everyone may read was quoted: %s", bl.Name, errs[bl.Name])
		}
	}
	for name, want := range map[string]string{
		"fifo":    fifo + " is a FIFO, not a regular file: refused",
		"dev":     dev + " is a character device, not a regular file: refused",
		"link":    link + " is a symlink of uid 65534 to a file uid 65534 may not read: refused",
		"private": private + ":1: not an IP address or CIDR: skipped",
	} {
		if !strings.Contains(errs[name], want) {
			t.Errorf("%s: errors %q, want %q", name, errs[name], want)
		}
	}
	// The FIFO replaced by a file is read: the watch did not wedge on it.
	tmp := filepath.Join(dir, "new")
	if err := os.WriteFile(tmp, []byte("198.51.100.7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, fifo); err != nil {
		t.Fatal(err)
	}
	if !waitFor(hang, func() bool {
		for _, bl := range r.eng.Summary().Blocklists {
			if bl.Name == "fifo" {
				return bl.Entries == 1 && len(bl.Errors) == 0
			}
		}
		return false
	}) {
		t.Errorf("the file that replaced the FIFO was not read: %+v", r.eng.Summary().Blocklists)
	}
}
