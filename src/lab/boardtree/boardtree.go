// Package boardtree gives the golden tests a copy of a board fixture tree of
// src/testdata/boards to change (its UCI files, its devices), and reads
// their case files.
package boardtree

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// ReadCase reads a golden case file: its inputs, a line "----", and the
// expected output. A missing separator fails the test saying so.
func ReadCase(t testing.TB, path string) (head, want string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, want, found := strings.Cut(string(data), "----\n")
	if !found {
		t.Fatalf("%s: no ---- line between the inputs and the expected output", path)
	}
	return head, want
}
