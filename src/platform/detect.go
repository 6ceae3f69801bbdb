package platform

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Files detection reads, relative to the root it is given.
const (
	fileBoardName   = "/tmp/sysinfo/board_name"
	fileModel       = "/tmp/sysinfo/model"
	fileRelease     = "/etc/openwrt_release"
	fileCompatible  = "/proc/device-tree/compatible"
	fileDTModel     = "/proc/device-tree/model"
	fileOSRelease   = "/proc/sys/kernel/osrelease"
	dirClassNet     = "/sys/class/net"
	maxSignalLength = 64 << 10 // no real signal file comes near this
)

const (
	unknownSoC      = "unknown"
	nothingReadable = "Nothing could be read: unknown chips are treated as software-only"
)

// Detect works out the board, SoC and network devices of the system whose
// filesystem is at root ("/" on a router, a fixture tree in tests). Every
// file is read as filepath.Join(root, path). Missing or unreadable files are
// not errors: the answer then says what was not seen. The error is for a
// root that is not a directory at all.
func Detect(root string) (Info, error) {
	info := Info{SoC: unknownSoC, Evidence: []Evidence{}, Devices: []Device{}}
	st, err := os.Stat(root)
	if err != nil {
		info.HWOffloadReason = nothingReadable
		return info, fmt.Errorf("platform: root %q: %v: pass the directory holding the router's /proc, /sys, /etc and /tmp (\"/\" on the router)", root, err)
	}
	if !st.IsDir() {
		info.HWOffloadReason = nothingReadable
		return info, fmt.Errorf("platform: root %q is not a directory: pass the directory holding the router's /proc, /sys, /etc and /tmp", root)
	}
	r := reader{root: root}
	r.readSignals(&info)
	info.Devices = readDevices(root)
	decideOffload(&info)
	return info, nil
}

// reader reads signal files below one root.
type reader struct{ root string }

func (r reader) path(p string) string { return filepath.Join(r.root, filepath.FromSlash(p)) }

// read returns a file's bytes, bounded, and whether it could be read.
func (r reader) read(p string) ([]byte, bool) {
	f, err := os.Open(r.path(p))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSignalLength))
	if err != nil {
		return nil, false
	}
	return b, true
}

// readText returns a one-line signal, trimmed of whitespace and the NUL
// that device-tree strings end with.
func (r reader) readText(p string) (string, bool) {
	b, ok := r.read(p)
	if !ok {
		return "", false
	}
	return strings.TrimSpace(strings.Trim(string(b), "\x00")), true
}

// readSignals fills the board, release, device-tree and kernel fields,
// recording each signal as evidence, weakest first.
func (r reader) readSignals(info *Info) {
	add := func(source, value, meaning string) {
		info.Evidence = append(info.Evidence, Evidence{Source: source, Value: value, Meaning: meaning})
	}
	if v, ok := r.readText(fileBoardName); ok && v != "" {
		info.BoardName = v
		add(fileBoardName, v, "board name")
	}
	if v, ok := r.readText(fileModel); ok && v != "" {
		info.Model = v
		add(fileModel, v, "model name")
	}
	if b, ok := r.read(fileRelease); ok {
		values, err := ParseOpenWrtRelease(b)
		if err != nil {
			add(fileRelease, err.Error(), "unreadable line skipped; fix or regenerate "+fileRelease)
		}
		info.Target = values["DISTRIB_TARGET"]
		info.Release = values["DISTRIB_DESCRIPTION"]
		if info.Release == "" {
			info.Release = values["DISTRIB_RELEASE"]
		}
		if v := values["DISTRIB_DESCRIPTION"]; v != "" {
			add(fileRelease, "DISTRIB_DESCRIPTION="+v, "OpenWrt release")
		} else if v := values["DISTRIB_RELEASE"]; v != "" {
			add(fileRelease, "DISTRIB_RELEASE="+v, "OpenWrt release")
		}
		if info.Target != "" {
			add(fileRelease, "DISTRIB_TARGET="+info.Target, targetMeaning(info.Target))
		}
	}
	if b, ok := r.read(fileCompatible); ok {
		info.Compatible = ParseCompatible(b)
		add(fileCompatible, strings.Join(info.Compatible, " "), compatibleMeaning(info.Compatible))
	}
	if v, ok := r.readText(fileDTModel); ok && v != "" {
		if info.Model == "" {
			info.Model = v
		}
		add(fileDTModel, v, "device-tree model")
	}
	if v, ok := r.readText(fileOSRelease); ok && v != "" {
		info.Kernel = v
		add(fileOSRelease, v, "kernel release")
	}
}

func targetMeaning(target string) string {
	row, ok := targetFamily(target)
	switch {
	case !ok:
		return "OpenWrt target of no chip family in the table"
	case row.HWOffload:
		return fmt.Sprintf("OpenWrt target of %s chips with the %s; the device tree must name the SoC", row.Vendor, row.Engine)
	default:
		return fmt.Sprintf("OpenWrt target of the %s family, which %s", row.Family, row.Limit)
	}
}

func compatibleMeaning(compatible []string) string {
	m, ok := matchSoC(compatible, "")
	if !ok {
		return "names no chip in the table: weaker signals decide"
	}
	if m.row.HWOffload {
		return fmt.Sprintf("SoC %s (%s) with the %s", m.display, m.value, m.row.Engine)
	}
	return fmt.Sprintf("SoC %s (%s), which %s", m.display, m.value, m.row.Limit)
}
