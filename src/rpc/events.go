package rpc

import (
	"context"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/plan"
)

// Events the object sends, both as ubus events (`ubus listen fastpath.*`)
// and as notifications to the object's subscribers.
const (
	EventMode = "fastpath.mode" // the effective mode changed
	EventCut  = "fastpath.cut"  // connections were cut or released
)

// ModeEvent is the data of fastpath.mode.
type ModeEvent struct {
	Previous string    `json:"previous"`
	Mode     plan.Mode `json:"mode"`
}

// CutEvent is the data of fastpath.cut.
type CutEvent struct {
	Action  string     `json:"action"` // "cut" or "release"
	Address string     `json:"address,omitempty"`
	Tuple   *cut.Tuple `json:"tuple,omitempty"`
	Reason  string     `json:"reason,omitempty"`
	Trigger string     `json:"trigger"`
	Count   int        `json:"count"`
	// ConntrackOnly of Count were only removed from conntrack (cutsAnswer).
	ConntrackOnly int `json:"conntrack_only,omitempty"`
}

// cutsAnswer is the answer of cut and verdict. A cut is dropped at
// ingress (in_fastpath), or, with no room in the cut sets or with
// cut_in_fastpath off, its conntrack entry is only deleted
// (conntrack_only): a live connection can carry on through that.
type cutsAnswer struct {
	Cuts          []cut.Cut `json:"cuts"`
	Count         int       `json:"count"`
	InFastpath    int       `json:"in_fastpath"`
	ConntrackOnly int       `json:"conntrack_only"`
}

// verdictAnswer is the answer of verdict: a forward verdict cuts nothing
// and says how many cuts it released.
type verdictAnswer struct {
	cutsAnswer
	Released int `json:"released"`
}

func newCutsAnswer(cuts []cut.Cut) cutsAnswer {
	a := cutsAnswer{Cuts: cuts, Count: len(cuts)}
	for _, c := range cuts {
		if c.InFastpath {
			a.InFastpath++
		}
	}
	a.ConntrackOnly = a.Count - a.InFastpath
	return a
}

func tupleOrNil(r CutRequest) *cut.Tuple {
	if r.Address != "" {
		return nil
	}
	t := r.Tuple
	return &t
}

// eventQueue bounds events waiting for ubus; beyond it they are dropped
// with a log line rather than blocking the daemon.
const eventQueue = 64

type event struct {
	name string
	data any
}

// Event queues an event for ubus listeners and the object's subscribers.
// It never blocks: events are sent in order by one goroutine, and dropped
// (with a log line) when ubus is gone or too slow.
func (o *Object) Event(name string, data any) {
	select {
	case o.events <- event{name, data}:
	default:
		o.log.WithField("event", name).Warn("ubus event queue full; event dropped")
	}
}

// Close stops sending events.
func (o *Object) Close() {
	o.stopOnce.Do(func() { close(o.stop) })
}

func (o *Object) sendEvents() {
	for {
		var ev event
		select {
		case <-o.stop:
			return
		case ev = <-o.events:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := o.client.SendEvent(ctx, ev.name, ev.data); err != nil {
			o.log.WithError(err).WithField("event", ev.name).Warn("ubus event not sent")
		}
		if o.obj.HasSubscribers() {
			if _, err := o.client.Notify(ctx, o.obj, ev.name, ev.data); err != nil {
				o.log.WithError(err).WithField("event", ev.name).Warn("ubus notification not sent")
			}
		}
		cancel()
	}
}
