package rpc

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/plan"
	"github.com/fastpath-wrt/fastpath/src/platform"
	"github.com/fastpath-wrt/fastpath/src/status"
)

// fakeController answers from fields and records what it was asked.
type fakeController struct {
	mu       sync.Mutex
	mode     plan.Mode
	flows    []netstate.Flow
	calls    []string
	lastQ    FlowQuery
	lastCut  CutRequest
	lastVerd VerdictRequest
	lastWhy  WhyQuery
	whyCount int         // why answers this many explanations when set
	err      error       // returned by every method when set
	summary  cut.Summary // the cut summary of cuts and status
	cutsMade []cut.Cut   // what cut answers, when set
	// publish announces a mode change, as the daemon does (Object.Event).
	publish func(name string, data any)
}

func newFake() *fakeController {
	return &fakeController{
		mode: plan.Mode{Requested: "software", Effective: "software", Reason: "software offload requested"},
		flows: []netstate.Flow{
			{ID: 1, Family: "ipv4", Proto: "tcp", Offload: "software",
				Original: cut.Tuple{Proto: "tcp", Src: "192.168.1.23", Dst: "93.184.216.34", SrcPort: 51234, DstPort: 443},
				Reply:    cut.Tuple{Proto: "tcp", Src: "93.184.216.34", Dst: "198.51.100.2", SrcPort: 443, DstPort: 51234},
				Packets:  10, Bytes: 5000000000},
			{ID: 2, Family: "ipv6", Proto: "udp",
				Original: cut.Tuple{Proto: "udp", Src: "2001:db8::1", Dst: "2001:db8::53", SrcPort: 5300, DstPort: 53},
				Reply:    cut.Tuple{Proto: "udp", Src: "2001:db8::53", Dst: "2001:db8::1", SrcPort: 53, DstPort: 5300}},
		},
	}
}

func (f *fakeController) record(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name)
	return f.err
}

func (f *fakeController) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeController) statusNow() status.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return status.Status{
		Version:  "test",
		Mode:     f.mode,
		Platform: platform.Info{SoC: "qca9558", HWOffloadReason: "QCA9558 has no flow offload engine"},
		Flows:    netstate.FlowCounts{Total: 2, Offloaded: 1},
		Kernel:   netstate.KernelFeatures{Release: "6.6.110", Flowtable: true, NetdevTable: true},
		Cut:      f.summary,
	}
}

func (f *fakeController) Status(context.Context) (status.Status, error) {
	if err := f.record("status"); err != nil {
		return status.Status{}, err
	}
	return f.statusNow(), nil
}

func (f *fakeController) Capabilities(context.Context) (Capabilities, error) {
	if err := f.record("capabilities"); err != nil {
		return Capabilities{}, err
	}
	return Capabilities{Platform: platform.Info{SoC: "qca9558"}, Kernel: netstate.KernelFeatures{Flowtable: true}, Modes: []string{"off", "software"}}, nil
}

func (f *fakeController) Flows(_ context.Context, q FlowQuery) ([]netstate.Flow, int, error) {
	if err := f.record("flows"); err != nil {
		return nil, 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastQ = q
	return f.flows[:min(q.Limit, len(f.flows))], len(f.flows), nil
}

func (f *fakeController) SetMode(_ context.Context, mode string) (status.Status, error) {
	if err := f.record("set " + mode); err != nil {
		return status.Status{}, err
	}
	f.mu.Lock()
	before := f.mode
	f.mode = plan.Mode{Requested: mode, Effective: mode, Reason: mode + " requested"}
	publish := f.publish
	f.mu.Unlock()
	if publish != nil && before.Effective != mode {
		publish(EventMode, ModeEvent{Previous: before.Effective, Mode: f.statusNow().Mode})
	}
	return f.statusNow(), nil
}

func (f *fakeController) Reload(context.Context) (status.Status, error) {
	if err := f.record("reload"); err != nil {
		return status.Status{}, err
	}
	return f.statusNow(), nil
}

func (f *fakeController) Cut(_ context.Context, r CutRequest) ([]cut.Cut, error) {
	if err := f.record("cut"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.lastCut = r
	made := f.cutsMade
	f.mu.Unlock()
	if made != nil {
		return made, nil
	}
	tu := r.Tuple
	if r.Address != "" {
		tu = cut.Tuple{Proto: "tcp", Src: r.Address, Dst: "192.0.2.1", SrcPort: 1000, DstPort: 80}
	}
	return []cut.Cut{{Original: tu, Reason: r.Reason, Trigger: r.Trigger,
		Since: time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC), Expires: 10, InFastpath: true}}, nil
}

func (f *fakeController) Uncut(_ context.Context, r CutRequest) (int, error) {
	if err := f.record("uncut"); err != nil {
		return 0, err
	}
	f.mu.Lock()
	f.lastCut = r
	f.mu.Unlock()
	return 1, nil
}

func (f *fakeController) Verdict(_ context.Context, r VerdictRequest) ([]cut.Cut, int, error) {
	if err := f.record("verdict"); err != nil {
		return nil, 0, err
	}
	f.mu.Lock()
	f.lastVerd = r
	f.mu.Unlock()
	if r.Verdict != cut.VerdictDrop {
		return nil, 1, nil
	}
	return []cut.Cut{{Original: r.Tuple, Reason: r.Reason, Trigger: r.Trigger}}, 0, nil
}

func (f *fakeController) Cuts(context.Context) (cut.Summary, error) {
	if err := f.record("cuts"); err != nil {
		return cut.Summary{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.summary.Enabled {
		return f.summary, nil
	}
	return cut.Summary{Enabled: true, InFastpath: true, Reason: "netdev ingress available", Active: 0}, nil
}

var _ Controller = (*fakeController)(nil)

func (f *fakeController) String() string { return fmt.Sprint(f.called()) }
