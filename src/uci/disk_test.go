package uci

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureRoot makes a router root with /etc/config/firewall from a fixture.
func fixtureRoot(t *testing.T, fixture string, mode os.FileMode) (root string, data []byte) {
	t.Helper()
	root = t.TempDir()
	data, err := os.ReadFile("testdata/" + fixture)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "etc", "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := ConfigPath(root, "firewall")
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return root, data
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestLoadMissing(t *testing.T) {
	_, err := Load(t.TempDir(), "fastpath")
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want an error that is os.ErrNotExist", err)
	}
	if !strings.Contains(err.Error(), filepath.Join("etc", "config", "fastpath")) {
		t.Errorf("error does not name the file: %v", err)
	}
	if _, err := Load(t.TempDir(), "../passwd"); err == nil || !strings.Contains(err.Error(), "invalid config name") {
		t.Errorf("a path as config name: %v", err)
	}
}

func TestLoadParseErrorNamesTheFile(t *testing.T) {
	root, _ := fixtureRoot(t, "fastpath", 0o644)
	os.WriteFile(ConfigPath(root, "firewall"), []byte("config defaults\n\toption input 'ACCEPT\n"), 0o644)
	_, err := Load(root, "firewall")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.File != ConfigPath(root, "firewall") || pe.Line != 2 {
		t.Errorf("got %v", err)
	}
}

func TestSaveIsAtomicAndKeepsMode(t *testing.T) {
	root, data := fixtureRoot(t, "firewall-23.05-rom", 0o600)
	f, err := Load(root, "firewall")
	if err != nil {
		t.Fatal(err)
	}
	mustSet(t, f, "@defaults[0]", "flow_offloading", "1")
	if err := Save(root, f); err != nil {
		t.Fatal(err)
	}
	path := ConfigPath(root, "firewall")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 as before", st.Mode().Perm())
	}
	if names := dirNames(t, filepath.Dir(path)); len(names) != 1 || names[0] != "firewall" {
		t.Errorf("temporary files left: %v", names)
	}
	got, _ := os.ReadFile(path)
	want := strings.Replace(string(data), "\toption forward\t\tREJECT\n# Uncomment", "\toption forward\t\tREJECT\n\toption flow_offloading '1'\n# Uncomment", 1)
	if string(got) != want {
		t.Errorf("saved\n%s", got)
	}
}

func TestSaveCrashBeforeRenameLeavesOldFile(t *testing.T) {
	root, data := fixtureRoot(t, "firewall-24.10-committed", 0o644)
	f, err := Load(root, "firewall")
	if err != nil {
		t.Fatal(err)
	}
	mustSet(t, f, "@defaults[0]", "flow_offloading_hw", "0")
	var tmpSeen string
	beforeRename = func(tmp string) error {
		tmpSeen = tmp
		written, _ := os.ReadFile(tmp)
		if string(written) != string(f.Bytes()) {
			t.Errorf("temporary file does not hold the new text")
		}
		// libuci ignores config names containing '.', so a temp file left
		// by a real crash is never read as a package.
		if base := filepath.Base(tmp); !strings.HasPrefix(base, ".firewall.") {
			t.Errorf("temporary file %q would be taken for a config", base)
		}
		return errors.New("power cut")
	}
	defer func() { beforeRename = func(string) error { return nil } }()
	if err := Save(root, f); err == nil || err.Error() != "power cut" {
		t.Fatalf("got %v", err)
	}
	if tmpSeen == "" || filepath.Dir(tmpSeen) != filepath.Dir(ConfigPath(root, "firewall")) {
		t.Errorf("temporary file %q is not beside the config", tmpSeen)
	}
	got, _ := os.ReadFile(ConfigPath(root, "firewall"))
	if string(got) != string(data) {
		t.Error("the old file changed")
	}
	if names := dirNames(t, filepath.Join(root, "etc", "config")); len(names) != 1 {
		t.Errorf("files left: %v", names)
	}
}

func TestSetCommittedLeavesStagedChangesPending(t *testing.T) {
	root, _ := fixtureRoot(t, "firewall-24.10-committed", 0o644)
	delta := "firewall.cfg01e63d.flow_offloading_hw='1'\n" +
		"firewall.cfg02dc81.mtu_fix='1'\n"
	os.MkdirAll(filepath.Join(root, "tmp", ".uci"), 0o700)
	deltaPath := StagedPaths(root, "firewall")[0]
	if err := os.WriteFile(deltaPath, []byte(delta), 0o600); err != nil {
		t.Fatal(err)
	}

	conflict, err := SetCommitted(root, "firewall", "@defaults[0]", "flow_offloading_hw", "0")
	if err != nil {
		t.Fatal(err)
	}
	if conflict == nil || conflict.Line != 1 || conflict.Value != "1" {
		t.Errorf("conflict %+v, want line 1 of the delta", conflict)
	}
	if got, _ := os.ReadFile(deltaPath); string(got) != delta {
		t.Errorf("staged changes were touched:\n%s", got)
	}
	f, err := Load(root, "firewall")
	if err != nil {
		t.Fatal(err)
	}
	// The staged change's section name still points at the same section.
	s, err := f.Section("cfg01e63d")
	if err != nil || s.Type != "defaults" {
		t.Fatalf("cfg01e63d: %v %v", s, err)
	}
	if v, _ := s.Get("flow_offloading_hw"); v != "0" {
		t.Errorf("committed value %q", v)
	}

	conflict, err = SetCommitted(root, "firewall", "@defaults[0]", "flow_offloading", "0")
	if err != nil || conflict != nil {
		t.Errorf("no staged change touches flow_offloading: %+v %v", conflict, err)
	}
	if _, err := SetCommitted(root, "firewall", "@defaults[3]", "x", "0"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing section: %v", err)
	}
	if _, err := SetCommitted(root, "fastpath", "main", "enabled", "0"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// LuCI's unsaved changes live in rpcd's per-session directory; those count
// too, and stay untouched.
func TestSetCommittedSeesLuCISessionChanges(t *testing.T) {
	root, _ := fixtureRoot(t, "firewall-24.10-committed", 0o644)
	session := filepath.Join(root, "var", "run", "rpcd", "uci-0123456789abcdef0123456789abcdef")
	os.MkdirAll(session, 0o700)
	os.MkdirAll(filepath.Join(root, "tmp", ".uci"), 0o700)
	os.WriteFile(filepath.Join(root, "tmp", ".uci", "firewall"), []byte("firewall.cfg02dc81.mtu_fix='1'\n"), 0o600)
	luci := "firewall.cfg01e63d.flow_offloading='1'\nfirewall.cfg01e63d.flow_offloading='0'\n"
	os.WriteFile(filepath.Join(session, "firewall"), []byte(luci), 0o600)

	conflict, err := SetCommitted(root, "firewall", "@defaults[0]", "flow_offloading", "1")
	if err != nil {
		t.Fatal(err)
	}
	if conflict == nil || conflict.File != filepath.Join(session, "firewall") || conflict.Line != 2 || conflict.Value != "0" {
		t.Errorf("conflict %+v, want line 2 of the session's delta", conflict)
	}
	if got, _ := os.ReadFile(filepath.Join(session, "firewall")); string(got) != luci {
		t.Errorf("LuCI's staged changes were touched: %q", got)
	}
	all, err := Staged(root, "firewall")
	if err != nil || len(all) != 3 || all[0].Option != "mtu_fix" {
		t.Errorf("Staged: %+v %v", all, err)
	}
}

func TestStagedWithoutFile(t *testing.T) {
	changes, err := Staged(t.TempDir(), "firewall")
	if err != nil || changes != nil {
		t.Errorf("no delta file: %v %v", changes, err)
	}
}

func TestSaveNewFile(t *testing.T) {
	root, _ := fixtureRoot(t, "fastpath", 0o644)
	data, _ := os.ReadFile("testdata/fastpath")
	f, err := Parse("/etc/config/fastpath", data)
	if err != nil {
		t.Fatal(err)
	}
	if err := Save(root, f); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(ConfigPath(root, "fastpath"))
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("new config: %v %v", st, err)
	}
	g, err := Load(root, "fastpath")
	if err != nil || string(g.Bytes()) != string(data) {
		t.Errorf("read back: %v", err)
	}
	if err := Save(filepath.Join(root, "nowhere"), f); err == nil || !strings.Contains(err.Error(), filepath.Join("nowhere", "etc", "config", "fastpath")) {
		t.Errorf("saving into a missing directory: %v", err)
	}
}

// /etc/config/firewall as a symlink (an overlay, a config kept elsewhere):
// libuci's uci_file_commit renames its new file over realpath(path), so the
// link stays and the file it points to gets the new text. Save does the
// same, for relative and absolute links, chains of links, and a dangling
// link (whose target libuci creates).
func TestSaveThroughSymlinkKeepsTheLink(t *testing.T) {
	for _, tt := range []struct{ name, link string }{
		{"relative", "../../data/firewall"},
		{"absolute", ""},
		{"chain", "chain"},
		{"dangling", "../../data/new/firewall"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root, data := fixtureRoot(t, "firewall-23.05-rom", 0o640)
			path := ConfigPath(root, "firewall")
			dataDir := filepath.Join(root, "data")
			target := filepath.Join(dataDir, "firewall")
			os.MkdirAll(filepath.Join(dataDir, "new"), 0o755)
			os.Rename(path, target)
			link := tt.link
			switch tt.name {
			case "absolute":
				link = target
			case "chain":
				os.Symlink("firewall", filepath.Join(dataDir, "link2"))
				os.Rename(target, filepath.Join(dataDir, "firewall"))
				link = "../../data/link2"
			case "dangling":
				target = filepath.Join(dataDir, "new", "firewall")
			}
			if err := os.Symlink(link, path); err != nil {
				t.Fatal(err)
			}
			f, err := Parse(path, data)
			if err != nil {
				t.Fatal(err)
			}
			f.Package = "firewall"
			mustSet(t, f, "@defaults[0]", "flow_offloading", "1")
			if err := Save(root, f); err != nil {
				t.Fatal(err)
			}
			if got, err := os.Readlink(path); err != nil || got != link {
				t.Errorf("the config is no longer the symlink to %s: %q %v", link, got, err)
			}
			got, err := os.ReadFile(target)
			if err != nil || string(got) != string(f.Bytes()) {
				t.Errorf("the link's target %s does not hold the new text: %v", target, err)
			}
			if tt.name != "dangling" {
				if st, _ := os.Stat(target); st.Mode().Perm() != 0o640 {
					t.Errorf("target mode %v, want 0640 as before", st.Mode().Perm())
				}
			}
			for _, dir := range []string{filepath.Dir(path), dataDir, filepath.Join(dataDir, "new")} {
				for _, n := range dirNames(t, dir) {
					if strings.HasSuffix(n, ".tmp") {
						t.Errorf("temporary file %s left in %s", n, dir)
					}
				}
			}
		})
	}
}
