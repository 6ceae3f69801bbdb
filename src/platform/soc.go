package platform

import (
	"path"
	"strings"
)

// socMatch is the chip detection settled on and the signal that proved it.
type socMatch struct {
	row     chip
	name    string // chip name, e.g. "qca9558"
	display string // e.g. "QCA9558"
	value   string // the compatible string or target that matched
}

// matchSoC finds the chip in the table. A device-tree compatible string is
// the strongest signal and always wins; the OpenWrt target is used only for
// chips without a device tree or families that cannot offload in hardware.
func matchSoC(compatible []string, target string) (socMatch, bool) {
	// Entries run most specific first (the board, then the SoC); board
	// strings match no chip pattern, so the SoC's entry decides.
	for _, c := range compatible {
		for _, row := range socTable {
			for _, pattern := range row.Compatible {
				if globMatch(pattern, c) {
					return newMatch(row, chipFromCompatible(c), c), true
				}
			}
		}
	}
	if target == "" {
		return socMatch{}, false
	}
	for _, row := range socTable {
		if row.HWOffload {
			continue // a target never proves an engine
		}
		for _, pattern := range row.Targets {
			if globMatch(pattern, target) {
				m := newMatch(row, row.Family, target)
				if row.Name == nameFromCompatible {
					m.display = row.Family // e.g. "ath79": no chip name to show
				}
				return m, true
			}
		}
	}
	return socMatch{}, false
}

// newMatch names the chip of a row; rows for whole families take the name
// from the signal.
func newMatch(row chip, fallbackName, value string) socMatch {
	m := socMatch{row: row, name: row.Name, display: row.Display, value: value}
	if m.name == nameFromCompatible {
		m.name = fallbackName
		m.display = strings.ToUpper(fallbackName)
	}
	return m
}

// chipFromCompatible turns "qca,qca9558" into "qca9558" and
// "mediatek,mt7621-soc" into "mt7621".
func chipFromCompatible(c string) string {
	_, name, ok := strings.Cut(c, ",")
	if !ok {
		name = c
	}
	return strings.ToLower(strings.TrimSuffix(name, "-soc"))
}

// globMatch matches shell-style patterns; a malformed pattern matches nothing.
func globMatch(pattern, s string) bool {
	ok, err := path.Match(pattern, s)
	return err == nil && ok
}

// targetFamily reports which table row a target belongs to, for evidence
// only (it may name a family that needs the device tree to be proven).
func targetFamily(target string) (chip, bool) {
	for _, row := range socTable {
		if row.Family == target || globMatch(row.Family+"/*", target) {
			return row, true
		}
		for _, pattern := range row.Targets {
			if globMatch(pattern, target) {
				return row, true
			}
		}
	}
	return chip{}, false
}
