package observe

import (
	"sort"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/config"
	"github.com/fastpath-wrt/fastpath/src/platform"
)

// Shaper is a device whose traffic a qdisc shapes (SQM), and how we know.
// Hardware offload forwards such traffic past every qdisc; software offload
// keeps it shaped: the flowtable transmits through the egress qdisc, and tc
// ingress (SQM's mirred to an ifb) runs before the netfilter ingress hook.
type Shaper struct {
	Device   string   `json:"device"`
	Evidence []string `json:"evidence"`
}

// shapingQdiscs are the root qdiscs that shape to a rate. fq_codel alone
// is OpenWrt's default qdisc and shapes nothing.
var shapingQdiscs = map[string]bool{"cake": true, "htb": true, "hfsc": true, "tbf": true}

// shapers gathers the evidence of shaping per device: the enabled queues of
// /etc/config/sqm, sqm-scripts' ifb4<device> ingress mirrors, and (on a
// live router) the kernel's root qdiscs by device.
func shapers(sqm []config.SQMQueue, devs []platform.Device, rootQdiscs map[string]string) []Shaper {
	ev := map[string][]string{}
	for _, q := range sqm {
		e := q.Section + " is enabled"
		if q.Qdisc != "" {
			e += " (" + q.Qdisc + ")"
		}
		ev[q.Device] = append(ev[q.Device], e)
	}
	for _, d := range devs {
		if dev, ok := strings.CutPrefix(d.Name, "ifb4"); ok && dev != "" {
			ev[dev] = append(ev[dev], d.Name+" exists (sqm-scripts' ingress mirror)")
		}
	}
	for dev, kind := range rootQdiscs {
		if shapingQdiscs[kind] {
			ev[dev] = append(ev[dev], "root qdisc "+kind)
		}
	}
	out := make([]Shaper, 0, len(ev))
	for dev, e := range ev {
		out = append(out, Shaper{Device: dev, Evidence: e})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Device < out[j].Device })
	return out
}
