//go:build linux

package blocklist

import (
	"fmt"
	"net/netip"
	"os"
	"strconv"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"golang.org/x/sys/unix"
)

// readListFile reads a file block list, safely whatever sits at its path.
func readListFile(b cut.BlocklistConfig) ([]netip.Prefix, []string) {
	f, quote, err := openListFile(b.Path)
	if err != nil {
		return nil, []string{err.Error()}
	}
	defer f.Close()
	ps, problems, err := cut.ParseBlocklist(f, cut.ListFile{List: b.Name, Path: b.Path, Quote: quote})
	if err != nil {
		problems = append(problems, err.Error())
	}
	return ps, problems
}

// openListFile opens a block-list file as root may read it for others:
// first as a path only (O_PATH: opening a device can have effects, a FIFO
// blocks), then, once it is known to be a regular file, for reading,
// never blocking. A symlink owned by someone other than root must lead to
// a file its owner may read: otherwise any local user could have root's
// files read. quote reports whether everyone may read the file, so that
// problems may show its lines.
func openListFile(path string) (f *os.File, quote bool, err error) {
	pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %v (the list is empty until the file exists)", path, err)
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return nil, false, fmt.Errorf("%s: %v", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false, fmt.Errorf("%s is %s, not a regular file: refused (point option path at a regular file)", path, fileKind(st.Mode))
	}
	var lst unix.Stat_t
	if err := unix.Lstat(path, &lst); err != nil {
		return nil, false, fmt.Errorf("%s: %v", path, err)
	}
	switch {
	case lst.Mode&unix.S_IFMT == unix.S_IFLNK:
		if lst.Uid != 0 && !mayRead(st, lst.Uid, lst.Gid) {
			return nil, false, fmt.Errorf("%s is a symlink of uid %d to a file uid %d may not read: refused (make it a regular file, or a link owned by root)", path, lst.Uid, lst.Uid)
		}
	case lst.Dev != st.Dev || lst.Ino != st.Ino:
		// Replaced between the open and the look at it (a symlink that
		// became a file): the check above says nothing of what was opened.
		return nil, false, fmt.Errorf("%s changed while it was opened: read again on its next change", path)
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %v", path, err)
	}
	return os.NewFile(uintptr(fd), path), st.Mode&0o004 != 0, nil
}

// mayRead reports whether uid (with primary group gid) may read a file by
// its mode bits.
func mayRead(st unix.Stat_t, uid, gid uint32) bool {
	switch {
	case st.Uid == uid:
		return st.Mode&0o400 != 0
	case st.Gid == gid:
		return st.Mode&0o040 != 0
	}
	return st.Mode&0o004 != 0
}

func fileKind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFSOCK:
		return "a socket"
	}
	return "not a regular file"
}
