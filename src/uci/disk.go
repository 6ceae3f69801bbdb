package uci

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ConfigPath is where package pkg lives under root: root/etc/config/pkg.
func ConfigPath(root, pkg string) string {
	return filepath.Join(root, "etc", "config", pkg)
}

// Load reads and parses root/etc/config/pkg. A missing file gives an error
// for which errors.Is(err, os.ErrNotExist) holds.
func Load(root, pkg string) (*File, error) {
	if !validPackage(pkg) {
		return nil, fmt.Errorf("uci: invalid config name %q: use letters, digits, _ and - only", pkg)
	}
	path := ConfigPath(root, pkg)
	data, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("uci: %w", err)
	}
	f, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	f.Package = pkg
	return f, nil
}

// beforeRename runs between writing the temporary file and renaming it
// over the config; tests use it to stand in for a crash at that moment.
var beforeRename = func(tmp string) error { return nil }

// Save writes f to root/etc/config/<f.Package> atomically: a temporary file
// (named with a leading dot and a '.', which libuci never takes for a
// config), synced, given the old file's mode and owner, then renamed over
// it. Only the config file is written: changes staged in root/tmp/.uci and
// rpcd's session directories stay pending.
//
// A config that is a symlink stays one: as libuci's uci_file_commit renames
// its new file over realpath(path), the file the link points to is replaced
// and the link is kept. Unlike libuci, which makes its temporary file in
// the config directory (so its rename fails when the link points to
// another filesystem), the temporary file is made beside that target.
func Save(root string, f *File) error {
	if !validPackage(f.Package) {
		return fmt.Errorf("uci: cannot save %q: invalid config name %q", f.Name, f.Package)
	}
	path, err := linkTarget(ConfigPath(root, f.Package))
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	mode := fs.FileMode(0o644)
	old, err := os.Stat(path)
	switch {
	case err == nil:
		mode = old.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("uci: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+f.Package+".fastpath-*.tmp")
	if err != nil {
		return fmt.Errorf("uci: cannot write %s: %w", path, err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(f.src); err != nil {
		return fmt.Errorf("uci: writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("uci: %w", err)
	}
	if old != nil {
		keepOwner(tmp, old)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("uci: syncing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("uci: %w", err)
	}
	if err := beforeRename(tmp.Name()); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("uci: replacing %s: %w", path, err)
	}
	ok = true
	syncDir(dir)
	return nil
}

// linkTarget is the file a write to path replaces: path itself, or, when
// path is a symlink, the file it finally points to (realpath), which need
// not exist yet (libuci creates a dangling link's target when it opens the
// config for writing).
func linkTarget(path string) (string, error) {
	for hops := 0; hops < 40; hops++ {
		st, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", fmt.Errorf("uci: %w", err)
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		if real, err := filepath.EvalSymlinks(path); err == nil {
			return real, nil
		}
		// a dangling link: follow it one step, its directory resolved
		dest, err := os.Readlink(path)
		if err != nil {
			return "", fmt.Errorf("uci: %w", err)
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		dir, err := filepath.EvalSymlinks(filepath.Dir(dest))
		if err != nil {
			return "", fmt.Errorf("uci: %s is a symlink to %s, whose directory does not exist: %w", path, dest, err)
		}
		path = filepath.Join(dir, filepath.Base(dest))
	}
	return "", fmt.Errorf("uci: %s: too many levels of symbolic links", path)
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync() // best effort: the rename is durable once the directory is
		d.Close()
	}
}

// SetCommitted sets one option in root/etc/config/pkg and saves it, under
// the same file lock libuci takes for a commit. Staged changes (the uci
// command's and LuCI's, see StagedPaths) are left pending; if one of them
// touches the same option the last such is returned, so the caller can say that the user's pending change will
// still override what was written when it is applied.
func SetCommitted(root, pkg, addr, option, value string) (conflict *Change, err error) {
	unlock, err := lockConfig(ConfigPath(root, pkg))
	if err != nil {
		return nil, err
	}
	defer unlock()
	f, err := Load(root, pkg)
	if err != nil {
		return nil, err
	}
	sec, err := f.Section(addr)
	if err != nil {
		return nil, err
	}
	staged, err := Staged(root, pkg)
	var perr *ParseError
	if err != nil && !errors.As(err, &perr) {
		return nil, err // unreadable delta: do not guess, do not write
	}
	if err := f.Set(addr, option, value); err != nil {
		return nil, err
	}
	if err := Save(root, f); err != nil {
		return nil, err
	}
	for i := len(staged) - 1; i >= 0; i-- {
		if staged[i].Touches(sec.Name, option) {
			c := staged[i]
			return &c, nil
		}
	}
	return nil, nil
}
