// Package boardtree copies a board fixture tree of src/testdata/boards for a
// test that changes it (its UCI files, its devices).
package boardtree

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Copy copies the tree of board from dir (the boards directory) into a
// new temporary directory, symlinks included, and returns its path. A
// missing board fails the test naming the tree to create.
func Copy(t testing.TB, dir, board string) string {
	t.Helper()
	src := filepath.Join(dir, board)
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("board fixture %s is missing: create src/testdata/boards/%s", src, board)
	}
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		default:
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
