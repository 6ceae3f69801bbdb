// Package platform works out, from a root directory, which board, SoC and
// network devices a router has and whether its chipset can offload flows in
// hardware, keeping the evidence for every conclusion.
package platform

// Info is everything detection learned about one router.
type Info struct {
	BoardName  string   `json:"board_name,omitempty"` // /tmp/sysinfo/board_name
	Model      string   `json:"model,omitempty"`      // /tmp/sysinfo/model or device-tree model
	Target     string   `json:"target,omitempty"`     // DISTRIB_TARGET, e.g. "ath79/generic"
	Release    string   `json:"release,omitempty"`    // DISTRIB_DESCRIPTION or DISTRIB_RELEASE
	Compatible []string `json:"compatible,omitempty"` // /proc/device-tree/compatible, in order
	Kernel     string   `json:"kernel,omitempty"`     // /proc/sys/kernel/osrelease

	SoC              string `json:"soc"` // lower-case chip name, e.g. "qca9558", "mt7621"; "unknown" when nothing matched
	Vendor           string `json:"vendor,omitempty"`
	HWOffloadCapable bool   `json:"hw_offload_capable"`
	HWOffloadEngine  string `json:"hw_offload_engine,omitempty"` // e.g. "MediaTek PPE"
	HWOffloadReason  string `json:"hw_offload_reason"`           // one sentence, for people
	// HWFlowCounters: the engine counts the bytes of its flows (where the
	// kernel reads them; see observe.HWFlows).
	HWFlowCounters bool       `json:"hw_flow_counters,omitempty"`
	Evidence       []Evidence `json:"evidence"`
	Devices        []Device   `json:"devices"`
}

// Evidence is one observed fact and what it told detection.
type Evidence struct {
	Source  string `json:"source"`  // file or signal, e.g. "/proc/device-tree/compatible"
	Value   string `json:"value"`   // what it said
	Meaning string `json:"meaning"` // what detection concluded from it
}

// Device is one entry of /sys/class/net.
type Device struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"` // "ether", "bridge", "vlan", "dsa-user", "dsa-conduit", "ipip", "wireless", "loopback", "ppp", "other"
	Driver    string   `json:"driver,omitempty"`
	Conduit   string   `json:"conduit,omitempty"` // DSA user port: its conduit (CPU) device
	Lower     []string `json:"lower,omitempty"`   // lower_* adjacency (bridge ports, vlan parent, DSA conduit)
	Master    string   `json:"master,omitempty"`  // upper bridge, if enslaved
	HWOffload bool     `json:"hw_offload"`        // this device's driver can take flowtable hardware offload on this SoC
	OperUp    bool     `json:"oper_up"`           // operstate "up", or "unknown" with IFF_UP set (loopback, tunnels)
	IfIndex   int      `json:"ifindex,omitempty"`
	Type      int      `json:"type,omitempty"`    // ARPHRD number of /sys/class/net/<dev>/type: 1 ether, 768 ipip, 772 loopback, 512 ppp
	Upper     []string `json:"upper,omitempty"`   // upper_* adjacency (bridge above a port, vlans and DSA user ports above a conduit)
	DSATag    string   `json:"dsa_tag,omitempty"` // DSA conduit: its tagging protocol (dsa/tagging), e.g. "mtk"
}
