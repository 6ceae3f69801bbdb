package nft

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels for errors.Is. Each message names what is missing and the fix.
var (
	// ErrNoFlowtable: the kernel cannot create a flowtable at all.
	ErrNoFlowtable = errors.New("this kernel has no flowtable support " +
		"(CONFIG_NF_FLOW_TABLE / modules nf_flow_table, nf_flow_table_inet missing): " +
		"install kmod-nft-offload (OpenWrt) or load the modules (modprobe nf_flow_table_inet)")

	// ErrNoFlowOffloadExpr: flowtables exist but the "flow add" rule expression does not.
	ErrNoFlowOffloadExpr = errors.New("this kernel has no \"flow add\" rule expression " +
		"(CONFIG_NFT_FLOW_OFFLOAD / module nft_flow_offload missing): " +
		"install kmod-nft-offload (OpenWrt) or load the module (modprobe nft_flow_offload)")

	// ErrHardwareUnsupported: "flags offload" was refused (EOPNOTSUPP) for
	// these devices. Nothing was changed; apply the spec again with
	// Hardware false (ApplyWithFallback does so).
	ErrHardwareUnsupported = errors.New("the kernel refused \"flags offload\" (EOPNOTSUPP): " +
		"a device's driver cannot offload flows in hardware; use software offload " +
		"(fastpath hw_offload off, firewall flow_offloading_hw 0)")

	// ErrNoDevice: a flowtable device does not exist. Wrapped in DeviceError.
	ErrNoDevice = errors.New("no such network device")
)

// DeviceError names the device the kernel did not find.
type DeviceError struct {
	Device string
	Err    error // the kernel's error
}

func (e *DeviceError) Error() string {
	return fmt.Sprintf("flowtable device %q does not exist (%v): bring the interface up or remove it from the plan", e.Device, e.Err)
}

// Is makes errors.Is(err, ErrNoDevice) true.
func (e *DeviceError) Is(target error) bool { return target == ErrNoDevice }

func (e *DeviceError) Unwrap() error { return e.Err }

// featureError adds what the machine itself shows (loaded modules) to a
// sentinel, keeping errors.Is working.
type featureError struct {
	sentinel error
	detail   string
	kernel   error
}

func (e *featureError) Error() string {
	msg := e.sentinel.Error()
	if e.detail != "" {
		msg += "; " + e.detail
	}
	if e.kernel != nil {
		msg += " (kernel said: " + e.kernel.Error() + ")"
	}
	return msg
}

func (e *featureError) Is(target error) bool { return target == e.sentinel }

func (e *featureError) Unwrap() error { return e.kernel }

// moduleDetail says which of the named modules /proc/modules and /sys/module
// under root do not show, e.g. "not loaded: nf_flow_table, nf_flow_table_inet".
// Built-in code also shows under /sys/module when it has parameters only, so
// this is a hint for the message, never the verdict: the kernel's reply is.
func moduleDetail(root string, modules ...string) string {
	var missing []string
	for _, m := range modules {
		if !moduleLoaded(root, m) {
			missing = append(missing, m)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return "not loaded here: " + strings.Join(missing, ", ")
}
