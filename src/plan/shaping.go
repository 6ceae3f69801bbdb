package plan

import (
	"slices"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/observe"
)

// shapedPath is a shaped device whose frames enter on flowtable devices.
type shapedPath struct {
	device   string
	through  []string // the flowtable devices its frames enter on
	evidence []string
}

// shapedPaths lists the SQM-shaped devices whose traffic the flowtable
// would carry.
func shapedPaths(s observe.Snapshot, devices []string) []shapedPath {
	r := newResolver(s)
	var out []shapedPath
	for _, sh := range s.Shapers {
		var through []string
		for _, d := range r.resolve(sh.Device) {
			if slices.Contains(devices, d) {
				through = append(through, d)
			}
		}
		if len(through) > 0 {
			out = append(out, shapedPath{device: sh.Device, through: through, evidence: sh.Evidence})
		}
	}
	return out
}

func describeShaped(paths []shapedPath) string {
	parts := make([]string, len(paths))
	for i, sp := range paths {
		parts[i] = sp.device
		if len(sp.through) != 1 || sp.through[0] != sp.device {
			parts[i] += " (frames enter on " + strings.Join(sp.through, ", ") + ")"
		}
		parts[i] += ": " + strings.Join(sp.evidence, "; ")
	}
	return strings.Join(parts, "; ")
}
