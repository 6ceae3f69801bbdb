package nft

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// moduleLoaded reports whether root's /proc/modules lists the module or
// root's /sys/module has a directory for it.
func moduleLoaded(root, name string) bool {
	if _, err := os.Stat(filepath.Join(root, "sys/module", name)); err == nil {
		return true
	}
	f, err := os.Open(filepath.Join(root, "proc/modules"))
	if err != nil {
		return false
	}
	defer f.Close()
	return modulesListed(f, name)
}

// modulesListed reports whether a /proc/modules text lists the module: one
// module per line, its name first.
func modulesListed(r io.Reader, name string) bool {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 0 && fields[0] == name {
			return true
		}
	}
	return false
}
