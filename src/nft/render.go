package nft

import (
	"sort"
	"strconv"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// Render returns the nft -f text of the table a spec asks for: exactly what
// Apply makes the kernel hold, in the layout `nft list table` prints, so
// `fastpath print`, golden tests and a person comparing by eye all read the
// same text. A disabled spec renders as a comment: there is no table then.
func Render(s netstate.FlowtableSpec) string {
	if !s.Enabled {
		return "# offload is off: table inet " + TableName + " is removed if present\n"
	}
	var b strings.Builder
	b.WriteString("table inet " + TableName + " {\n")
	b.WriteString("\tflowtable " + FlowtableName + " {\n")
	b.WriteString("\t\thook ingress priority filter\n")
	if devs := normalDevices(s.Devices); len(devs) > 0 {
		quoted := make([]string, len(devs))
		for i, d := range devs {
			quoted[i] = quoteDevice(d)
		}
		b.WriteString("\t\tdevices = { " + strings.Join(quoted, ", ") + " }\n")
	}
	if s.Hardware {
		b.WriteString("\t\tflags offload\n")
	}
	if s.Counter {
		b.WriteString("\t\tcounter\n")
	}
	b.WriteString("\t}\n\n")
	b.WriteString("\tchain " + ChainName + " {\n")
	b.WriteString("\t\ttype filter hook forward priority filter - 1; policy accept;\n")
	b.WriteString("\t\tmeta l4proto { tcp, udp } ")
	if s.OffloadAfterPackets > 0 {
		b.WriteString("ct packets >= " + strconv.FormatUint(s.OffloadAfterPackets, 10) + " ")
	}
	b.WriteString("flow add @" + FlowtableName)
	if s.FirewallDigest != "" {
		b.WriteString(` comment "` + digestComment + s.FirewallDigest + `"`)
	}
	b.WriteString("\n")
	b.WriteString("\t}\n")
	b.WriteString("}\n")
	return b.String()
}

// normalDevices returns the devices sorted and without duplicates, so the
// same set of devices always renders and applies the same way.
func normalDevices(devs []string) []string {
	out := make([]string, 0, len(devs))
	seen := make(map[string]bool, len(devs))
	for _, d := range devs {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// quoteDevice quotes names nft's parser would not read as one word
// (VLAN devices such as eth0.2, names with a dash).
func quoteDevice(d string) string {
	for _, r := range d {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return `"` + d + `"`
		}
	}
	return d
}
