package daemon

import (
	"os"
	"path/filepath"
	"strings"
)

// hwCorrectedFile keeps, across restarts and for the CLI, why fastpath set
// flow_offloading_hw back to 0: once UCI says 0, only this remembers that
// hardware offload was asked for and why it cannot run. /var/run is a
// tmpfs on OpenWrt: a reboot forgets, as the kernel state does.
const hwCorrectedFile = "var/run/fastpath/hw_corrected"

func (r *Reconciler) loadHWCorrected() string {
	data, err := os.ReadFile(filepath.Join(r.Root, hwCorrectedFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

func (r *Reconciler) saveHWCorrected(reason string) {
	path := filepath.Join(r.Root, hwCorrectedFile)
	if reason == "" {
		os.Remove(path)
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		r.Log.WithError(err).Debug("cannot remember the hardware-offload correction")
		return
	}
	if err := os.WriteFile(path, []byte(reason+"\n"), 0o644); err != nil {
		r.Log.WithError(err).Debug("cannot remember the hardware-offload correction")
	}
}
