//go:build unix

package uci

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// lockConfig takes the exclusive flock libuci takes on a config file while
// it commits, so a concurrent `uci commit` waits for us and we for it.
func lockConfig(path string) (unlock func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("uci: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil && err != syscall.ENOSYS {
		f.Close()
		return nil, fmt.Errorf("uci: locking %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// keepOwner gives the new file the old one's owner; it can only fail when
// we are not root, and then the file is ours anyway.
func keepOwner(f *os.File, old fs.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok {
		f.Chown(int(st.Uid), int(st.Gid))
	}
}
