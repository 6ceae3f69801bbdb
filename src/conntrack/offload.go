package conntrack

// Conntrack status bits fastpath reads. IPS_OFFLOAD is named by the netlink
// library; IPS_HW_OFFLOAD is not, so both are spelled out here from
// uapi/linux/netfilter/nf_conntrack_common.h.
const (
	statusAssured   uint32 = 1 << 2
	statusOffload   uint32 = 1 << 14 // IPS_OFFLOAD: in a flowtable
	statusHWOffload uint32 = 1 << 15 // IPS_HW_OFFLOAD: in a flowtable with hardware offload
	OffloadNone            = ""
	OffloadSoftware        = "software"
	OffloadHardware        = "hardware"
)

// offloadOf names the offload state a status word shows. The hardware bit
// wins: a hardware-offloaded entry carries both bits.
func offloadOf(status uint32) string {
	switch {
	case status&statusHWOffload != 0:
		return OffloadHardware
	case status&statusOffload != 0:
		return OffloadSoftware
	}
	return OffloadNone
}
