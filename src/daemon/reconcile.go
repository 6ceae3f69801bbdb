// Package daemon wires fastpath together: it observes, plans, applies and
// verifies on every change of configuration, links or our own tables, and
// answers the ubus object's questions from the kernel's truth.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/fastpath-wrt/fastpath/src/logger"

	"github.com/fastpath-wrt/fastpath/src/config"
	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/cut/engine"
	"github.com/fastpath-wrt/fastpath/src/nft"
	"github.com/fastpath-wrt/fastpath/src/observe"
	"github.com/fastpath-wrt/fastpath/src/plan"
	"github.com/fastpath-wrt/fastpath/src/status"
	"github.com/fastpath-wrt/fastpath/src/uci"
)

// Reconciler runs observe -> plan -> apply -> verify once per call.
type Reconciler struct {
	Root string
	Log  *logger.Entry
	// Ubus is ubusd's socket ("" for the default paths), on which procd
	// is told about the configs fastpath commits (announceConfig).
	Ubus string

	// kernel is what passes and status use; nft, ct and cut are the
	// clients behind it, for the event sources and the ubus calls.
	kernel kernel
	nft    *nft.Backend
	ct     *conntrack.Client
	cut    *engine.Engine
	mu     sync.Mutex
	last   result
	// counts are conntrack's counts for status, the offloaded ones kept a
	// while in a big table.
	counts *offloadCounts
	// refused is the kernel's last refusal of a flowtable, kept while the
	// kernel looks as it did then.
	refused kernelRefusal
	// recheck is the last change of firewall4's forward-path rules seen;
	// recorded, the digest our rule held at the last status.
	recheck  *status.RecheckEvent
	recorded string
	// announcer keeps what procd could not be told.
	announcer announcer
}

// result is what the last reconcile decided and met.
type result struct {
	snap observe.Snapshot
	plan plan.Plan
	errs []error
	made bool // by a pass or Observe: false only before the first
}

// NewReconciler opens the kernel interfaces. A missing conntrack netlink
// interface is an error: without it nothing can be verified or cut.
func NewReconciler(root string, log *logger.Entry) (*Reconciler, error) {
	r := &Reconciler{Root: root, Log: log}
	var err error
	if r.nft, err = nft.New(); err != nil {
		return nil, fmt.Errorf("nftables: %w", err)
	}
	if r.ct, err = conntrack.Open(); err != nil {
		return nil, fmt.Errorf("conntrack: %w", err)
	}
	if r.cut, err = engine.NewEngine(r.ct, log.WithField("part", "cut")); err != nil {
		return nil, fmt.Errorf("cut: %w", err)
	}
	r.counts = newOffloadCounts(r.ct)
	r.kernel = kernel{flowtable: r.nft, cut: r.cut, flows: r.counts}
	return r, nil
}

// Close releases the kernel interfaces and leaves the kernel state alone.
func (r *Reconciler) Close() {
	if err := r.cut.Close(); err != nil {
		r.Log.WithError(err).Warn("detaching the XDP cut")
	}
	r.ct.Close()
}

// ErrNotApplied is wrapped by Reconcile when the kernel state could not be
// made to match the plan; the status says why.
var ErrNotApplied = errors.New("plan not applied")

// Reconcile makes the kernel match the configuration and reports the
// kernel's truth. It never tears down flows when nothing changed.
func (r *Reconciler) Reconcile(ctx context.Context) (status.Status, error) {
	r.mu.Lock()
	st, err := r.reconcileLocked(ctx)
	r.mu.Unlock()
	r.countFlows(&st)
	return st, err
}

func (r *Reconciler) reconcileLocked(ctx context.Context) (status.Status, error) {
	var res result
	for round := 0; ; round++ {
		snap, err := observe.Observe(r.Root)
		if err != nil {
			// Keep the kernel as it is: a half-read config must not turn
			// offload off or drop the cut.
			r.last.errs = []error{err}
			st := r.statusLocked(ctx)
			return st, fmt.Errorf("%w: %v", ErrNotApplied, err)
		}
		res = result{snap: snap}
		c := plan.Constraints{HWCorrected: r.loadHWCorrected()}
		p := plan.Make(snap, c)
		if err := r.applyFlowtable(&p); err != nil && errors.Is(err, nft.ErrHardwareUnsupported) {
			c.HardwareRefused = err.Error()
			p = plan.Make(snap, c)
			err = r.applyFlowtable(&p)
			res.note(err)
		} else {
			res.note(err)
		}
		r.refused = r.refused.after(r.kernelLook(snap.Kernel), p.Flowtable.Enabled, res.errs)
		if r.applyUCIFixes(ctx, &p, &res) && round == 0 && len(res.errs) == 0 {
			// Plan again from what was written: the status this pass
			// reports is then the one the next pass finds and keeps.
			continue
		}
		res.note(r.applyCut(ctx, p))
		res.plan = p
		break
	}
	res.made = true
	r.last = res
	st := r.statusLocked(ctx)
	if len(res.errs) > 0 {
		return st, fmt.Errorf("%w: %w", ErrNotApplied, res.errs[0])
	}
	return st, nil
}

func (res *result) note(err error) {
	if err != nil {
		res.errs = append(res.errs, err)
	}
}

func (r *Reconciler) applyFlowtable(p *plan.Plan) error {
	if !p.Flowtable.Enabled {
		if err := r.kernel.flowtable.Cleanup(); err != nil {
			return fmt.Errorf("removing table inet %s: %w", nft.TableName, err)
		}
		return nil
	}
	// fw4's forward-path rules differ from those our rule recorded at the
	// last pass: count the offloaded flows a recheck sends back through
	// the slow path.
	s, offloaded := p.Flowtable, 0
	changed := s.FirewallDigest != "" && r.recorded != "" && r.recorded != s.FirewallDigest
	if changed {
		counts, _ := r.kernel.flows.Counts()
		offloaded = counts.Offloaded
	}
	res, err := r.kernel.flowtable.Apply(p.Flowtable)
	for _, a := range res.Actions {
		r.Log.Info(a)
	}
	if err != nil {
		return err
	}
	if changed {
		r.noteRuleChange(res, offloaded)
	}
	if !res.Changed {
		r.Log.Debug("flowtable already as planned")
	}
	return nil
}

// noteRuleChange keeps what a change of firewall4's rules did, for status.
func (r *Reconciler) noteRuleChange(res nft.Result, offloaded int) {
	at := time.Now().UTC().Format(time.RFC3339)
	did := "recheck_on_rule_change is off, offloaded flows kept running"
	if !res.Recreated {
		offloaded = 0
	} else {
		did = strconv.Itoa(offloaded) + " offloaded flows re-checked (a fresh flowtable sent each through the slow path once; the flows the new rules accept are offloaded again)"
	}
	r.recheck = &status.RecheckEvent{At: at, Flows: offloaded, Reason: "firewall4's forward-path rules changed at " + at + ": " + did}
	r.Log.Info(r.recheck.Reason)
}

// applyUCIFixes writes the corrections the plan asks for, leaving changes
// the user has staged in LuCI pending, and tells procd, as a set does, so
// fw4 reloads with them. It reports whether it wrote one.
func (r *Reconciler) applyUCIFixes(ctx context.Context, p *plan.Plan, res *result) (wrote bool) {
	var written []string
	for _, f := range p.UCIFixes {
		conflict, err := uci.SetCommitted(r.Root, f.Package, f.Section, f.Option, f.Value)
		if err != nil {
			res.note(fmt.Errorf("uci set %s: %w", f, err))
			continue
		}
		wrote = true
		if !slices.Contains(written, f.Package) {
			written = append(written, f.Package)
		}
		r.Log.WithField("reason", f.Reason).Warnf("uci set %s", f)
		if conflict != nil {
			r.Log.Warnf("a change staged in LuCI also touches %s.%s.%s: left pending", f.Package, f.Section, f.Option)
		}
		if f.Option == "flow_offloading_hw" {
			r.saveHWCorrected(p.Mode.Reason)
		}
	}
	r.announceConfig(ctx, written)
	return wrote
}

// SetMode records a mode the user asks for (WriteMode) and tells procd
// about every config it committed, so the router runs what was written:
// firewall4 reloads its own flowtable with flow_offloading.
func (r *Reconciler) SetMode(ctx context.Context, mode string) ([]string, error) {
	notes, err := WriteMode(r.Root, mode)
	// Also after a failed write: the configs before it are committed.
	r.announceConfig(ctx, config.ModePackages(mode))
	return notes, err
}

// applyCut syncs the cut to the plan. A disabled one is synced too, not
// cleaned up: Sync removes its table and keeps the summary saying why, where
// Cleanup (for stopping) would leave the summary of the config before.
func (r *Reconciler) applyCut(ctx context.Context, p plan.Plan) error {
	return r.kernel.cut.Sync(p.Cut.Devices, p.Cut.Config)
}

// Observe plans from a fresh snapshot without applying anything, so
// Status can compare the plan with the kernel.
func (r *Reconciler) Observe() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	snap, err := observe.Observe(r.Root)
	if err != nil {
		r.last = result{errs: []error{err}, made: true}
		return err
	}
	r.last = result{snap: snap, plan: plan.Make(snap, plan.Constraints{HWCorrected: r.loadHWCorrected()}), made: true}
	return nil
}

// Cleanup removes every table fastpath owns. Offloaded flows fall back to
// the slow path (and to fw4's flowtable, where it has one).
func (r *Reconciler) Cleanup() error {
	return errors.Join(r.kernel.flowtable.Cleanup(), r.kernel.cut.Cleanup())
}
