//go:build linux

package engine

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

func TestKernelErrorKinds(t *testing.T) {
	wrap := func(e error) error { return fmt.Errorf("conn.Receive: %w", e) }
	if !isNoNetdev(wrap(unix.EAFNOSUPPORT)) || !isNoNetdev(wrap(unix.EOPNOTSUPP)) || isNoNetdev(wrap(unix.ENOENT)) {
		t.Error("isNoNetdev misreads kernel errors")
	}
	if !isSetFull(wrap(unix.ENFILE)) || !isSetFull(wrap(unix.ENOSPC)) || isSetFull(wrap(unix.EEXIST)) {
		t.Error("isSetFull misreads kernel errors")
	}
}
