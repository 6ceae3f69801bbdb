package config

import "fmt"

// Modes a user can ask for with `fastpath set` or ubus `set`.
var Modes = []string{"off", "software", "hardware", "auto"}

// optionWrite is one UCI option WriteMode sets.
type optionWrite struct{ pkg, section, option, value string }

// modeWrites maps a mode to the options that express it: the firewall's
// switches stay the intent that fw4 and LuCI's checkbox show.
func modeWrites(mode string) ([]optionWrite, error) {
	fw := func(opt, v string) optionWrite { return optionWrite{"firewall", "@defaults[0]", opt, v} }
	hw := func(v string) optionWrite { return optionWrite{"fastpath", "@fastpath[0]", "hw_offload", v} }
	switch mode {
	case "off":
		return []optionWrite{fw("flow_offloading", "0")}, nil
	case "software":
		return []optionWrite{fw("flow_offloading", "1"), fw("flow_offloading_hw", "0")}, nil
	case "hardware":
		return []optionWrite{fw("flow_offloading", "1"), fw("flow_offloading_hw", "1"), hw(HWFollow)}, nil
	case "auto":
		return []optionWrite{fw("flow_offloading", "1"), hw(HWAuto)}, nil
	}
	return nil, fmt.Errorf("mode: %q is not one of off, software, hardware, auto", mode)
}

// ModePackages are the configs WriteMode commits for mode (modeWrites).
func ModePackages(mode string) []string {
	if mode == "hardware" || mode == "auto" {
		return firewallAndFastpath
	}
	return firewallOnly
}

var firewallOnly, firewallAndFastpath = []string{"firewall"}, []string{"firewall", "fastpath"}
