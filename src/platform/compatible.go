package platform

import "strings"

// ParseCompatible splits /proc/device-tree/compatible, a NUL-separated list
// of "vendor,name" strings, most specific first (the board, then the SoC).
// Empty entries and surrounding whitespace are dropped.
func ParseCompatible(data []byte) []string {
	var out []string
	for _, part := range strings.Split(string(data), "\x00") {
		part = strings.TrimSpace(part)
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}
