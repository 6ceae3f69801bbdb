package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/config"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/nft"
)

// hwCorrectedFile keeps, across restarts and for the CLI, why fastpath set
// flow_offloading_hw back to 0: once UCI says 0, only this remembers that
// hardware offload was asked for and why it cannot run. /var/run is a
// tmpfs on OpenWrt: a reboot forgets, as the kernel state does.
const hwCorrectedFile = "var/run/fastpath/hw_corrected"

// WriteMode records a mode the user asks for (config.WriteMode) and forgets
// why fastpath once set flow_offloading_hw back to 0: the user has spoken
// again, and the next plan explains their choice, not the old correction.
func WriteMode(root, mode string) ([]string, error) {
	notes, err := config.WriteMode(root, mode)
	if err == nil {
		os.Remove(filepath.Join(root, hwCorrectedFile))
	}
	return notes, err
}

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

// kernelRefusal is the kernel's answer when it would not make a flowtable
// (or its flow offload rule). Once the mode is off nothing asks the kernel
// again, so without it status and capabilities would go back to what the
// config and module tree promise and offer software offload once more.
// It holds until the kernel looks different: another release, or the
// flowtable modules loaded since.
type kernelRefusal struct {
	kernel string // kernelLook when it refused
	reason string
}

// after is the refusal to keep once a reconcile of a kernel that looks like
// look has applied (or, with flowtable false, skipped) a flowtable.
func (k kernelRefusal) after(look string, flowtable bool, errs []error) kernelRefusal {
	for _, err := range errs {
		if errors.Is(err, nft.ErrNoFlowtable) || errors.Is(err, nft.ErrNoFlowOffloadExpr) {
			return kernelRefusal{kernel: look, reason: err.Error()}
		}
	}
	if flowtable || look != k.kernel {
		return kernelRefusal{} // the kernel took it, or changed
	}
	return k
}

// kernelLook is what a refusal is remembered against.
func (r *Reconciler) kernelLook(k netstate.KernelFeatures) string {
	loaded := func(m string) bool {
		_, err := os.Stat(filepath.Join(r.Root, "sys/module", m))
		return err == nil
	}
	return fmt.Sprintf("%s flowtable=%t modules=%t,%t", k.Release, k.Flowtable, loaded("nf_flow_table"), loaded("nf_flow_table_inet"))
}
