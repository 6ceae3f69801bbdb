package daemon

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/nft"
	"github.com/fastpath-wrt/fastpath/src/observe"
	"github.com/fastpath-wrt/fastpath/src/plan"
	"github.com/fastpath-wrt/fastpath/src/report"
	"github.com/fastpath-wrt/fastpath/src/status"
	"github.com/fastpath-wrt/fastpath/src/supervise"
	"github.com/fastpath-wrt/fastpath/src/version"
)

// Status reads the kernel now and reports it beside the last plan.
func (r *Reconciler) Status(ctx context.Context) status.Status {
	st := r.statusUncounted(ctx)
	r.countFlows(&st)
	return st
}

// statusUncounted is Status without conntrack's counts, for answers that
// do not report them.
func (r *Reconciler) statusUncounted(ctx context.Context) status.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statusLocked(ctx)
}

// countFlows adds conntrack's counts. It runs outside the reconcile lock:
// the offloaded counts need a conntrack dump (of the offloaded entries),
// and neither a pass nor another status call should wait on it (nor, in
// a big table, the caller: see countDuty). Without
// any flowtable in the namespace nothing is offloaded, and the kernel's
// counter is the whole answer. The offload engine's own tables are read
// beside them, at the same moment.
func (r *Reconciler) countFlows(st *status.Status) {
	st.HWFlows = observe.HWFlows(r.Root, st.Platform)
	if has, err := r.kernel.flowtable.AnyFlowtable(); err == nil && !has {
		n, err := r.kernel.flows.Total()
		if err != nil {
			st.Errors = append(st.Errors, "counting conntrack flows: "+err.Error())
			return
		}
		st.Flows = netstate.FlowCounts{Total: n}
		return
	}
	counts, err := r.kernel.flows.Counts()
	if err != nil {
		st.Errors = append(st.Errors, "counting conntrack flows: "+err.Error())
		return
	}
	st.Flows = counts
}

// statusLocked is the status without conntrack's counts (countFlows).
func (r *Reconciler) statusLocked(ctx context.Context) status.Status {
	p, snap := r.last.plan, r.last.snap
	st := status.Status{
		Version:   version.Version,
		Mode:      p.Mode,
		Decisions: p.Decisions,
		Platform:  snap.Platform,
		Kernel:    snap.Kernel,
		Tunnels:   p.Tunnels,
		Errors:    []string{},
	}
	for _, err := range r.last.errs {
		st.Errors = append(st.Errors, err.Error())
	}
	if r.refused.reason != "" && st.Kernel.Flowtable {
		// The kernel refused what the config and module tree promised.
		st.Kernel.Flowtable = false
		st.Kernel.Missing = append(st.Kernel.Missing, r.refused.reason)
	}
	if st.Tunnels == nil {
		st.Tunnels = []plan.Tunnel{}
	}
	st.Flowtable = status.Flowtable{
		Table:   "inet " + nft.TableName,
		Name:    nft.FlowtableName,
		Devices: p.Flowtable.Devices,
		Flags:   report.Flags(p.Flowtable),
	}
	if st.Flowtable.Devices == nil {
		st.Flowtable.Devices = []string{}
	}
	k, err := r.kernel.flowtable.Read()
	if err != nil {
		st.Errors = append(st.Errors, "reading table inet "+nft.TableName+": "+err.Error())
	}
	st.Flowtable.Kernel = k
	r.recorded = k.FirewallDigest
	st.Recheck = status.Recheck{
		Enabled:  p.Flowtable.RecheckOnRuleChange,
		Firewall: snap.Firewall.Text(),
		Digest:   snap.Firewall.Digest,
		Recorded: k.FirewallDigest,
		Last:     r.recheck,
	}
	st.Flowtable.InSync = inSync(p.Flowtable, k)
	st.Mode.Effective, st.Mode.Reason = effective(st.Mode, p.Flowtable, k, st.Errors)
	// After effective: a service not reloaded is no reason for our table.
	if missed := r.announcer.warning(); missed != "" {
		st.Errors = append(st.Errors, missed)
	}
	if !r.last.made {
		// The ubus object answers while the daemon's first pass runs.
		st.Mode.Reason = StartingReason
	}
	st.Cut = nonNilSummary(r.kernel.cut.Summary())
	st.Watchers = supervise.Health()
	for _, w := range st.Watchers {
		if w.State == supervise.StateDegraded {
			st.Errors = append(st.Errors, fmt.Sprintf("watcher %s degraded since %s: %s (resyncing and restarting)",
				w.Name, w.DegradedSince.Format(time.RFC3339), w.LastError))
		}
	}
	return st
}

// StartingReason is the mode's reason before the daemon's first pass has
// read the config and the kernel.
const StartingReason = "starting: the first pass has not finished; ask again in a moment"

// effective is the mode the kernel really runs, with the plan's reason
// when it agrees and the first error when it does not.
func effective(m plan.Mode, want netstate.FlowtableSpec, k netstate.KernelFlowtable, errs []string) (string, string) {
	got := plan.ModeOff
	if k.FlowtablePresent && k.ForwardRule && len(k.Devices) > 0 {
		got = plan.ModeSoftware
		if k.Hardware {
			got = plan.ModeHardware
		}
	}
	if got == m.Effective || (m.Effective == "" && got == plan.ModeOff) {
		return got, m.Reason
	}
	why := "the kernel does not have the planned flowtable"
	if len(errs) > 0 {
		why = errs[0]
	} else if want.Enabled && len(want.Devices) == 0 {
		why = "no device to offload on yet"
	}
	return got, m.Reason + "; but " + why
}

func inSync(want netstate.FlowtableSpec, k netstate.KernelFlowtable) bool {
	if !want.Enabled {
		return !k.TablePresent
	}
	return k.FlowtablePresent && k.ForwardRule && k.Hardware == want.Hardware &&
		k.Counter == want.Counter && k.OffloadAfterPackets == want.OffloadAfterPackets &&
		slices.Equal(sorted(k.Devices), want.Devices)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
