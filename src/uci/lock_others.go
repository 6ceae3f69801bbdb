//go:build !unix

package uci

import (
	"io/fs"
	"os"
)

// lockConfig does nothing where there is no flock; UCI lives on Linux.
func lockConfig(path string) (unlock func(), err error) { return func() {}, nil }

func keepOwner(f *os.File, old fs.FileInfo) {}
