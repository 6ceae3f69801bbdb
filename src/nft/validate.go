package nft

import (
	"fmt"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// maxDeviceName is IFNAMSIZ minus the terminating NUL.
const maxDeviceName = 15

// validate reports the first device name the kernel could never accept, so a
// bad plan fails before anything is sent.
func validate(s netstate.FlowtableSpec) error {
	for i, d := range s.Devices {
		switch {
		case d == "":
			return fmt.Errorf("nft spec: devices[%d] is empty: give the interface name, e.g. eth0", i)
		case len(d) > maxDeviceName:
			return fmt.Errorf("nft spec: device %q is longer than %d bytes: Linux interface names are at most %d", d, maxDeviceName, maxDeviceName)
		case strings.ContainsAny(d, " \t\n\"'/{},;\\"):
			return fmt.Errorf("nft spec: device %q contains a character no interface name has: check the plan's device list", d)
		}
	}
	return nil
}
