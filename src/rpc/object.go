package rpc

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/fastpath-wrt/fastpath/src/logger"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/ubus"
)

// callTimeout bounds one controller call, so a stuck kernel query cannot
// hold a caller (LuCI) forever.
const callTimeout = 20 * time.Second

// Object is the fastpath ubus object bound to a controller.
type Object struct {
	ctl    Controller
	log    *logger.Entry
	obj    *ubus.Object
	events chan event
	client *ubus.Client

	stop     chan struct{}
	stopOnce sync.Once
}

// New builds the object; Register puts it on ubus.
func New(ctl Controller, log *logger.Entry) *Object {
	if log == nil {
		log = logger.Default()
	}
	o := &Object{ctl: ctl, log: log, events: make(chan event, eventQueue), stop: make(chan struct{})}
	// paged: the list a method sizes itself by its limit argument.
	type handler struct {
		h     func(context.Context, ubus.Table) (any, error)
		paged string
	}
	handlers := map[string]handler{
		"status":       {h: o.status},
		"capabilities": {h: o.capabilities},
		"flows":        {o.flows, "flows"},
		"set":          {h: o.set},
		"reload":       {h: o.reload},
		"cut":          {h: o.cut},
		"uncut":        {h: o.uncut},
		"verdict":      {h: o.verdict},
		"cuts":         {o.cuts, "cuts"},
		"why":          {o.why, "connections"},
	}
	o.obj = &ubus.Object{Name: ObjectName}
	for _, name := range append(append([]string(nil), ReadMethods...), WriteMethods...) {
		h := handlers[name]
		o.obj.Methods = append(o.obj.Methods, ubus.Method{
			Name:      name,
			Signature: signatures[name],
			Handler:   o.wrap(name, h.h, h.paged),
		})
	}
	return o
}

// UbusObject is the object to register on a connection.
func (o *Object) UbusObject() *ubus.Object { return o.obj }

// Register adds the object to the client (now and after every reconnect)
// and starts sending events through it.
func (o *Object) Register(c *ubus.Client) error {
	o.client = c
	go o.sendEvents()
	return c.AddObject(o.obj)
}

// wrap turns a handler's error into the ubus status and {"error": text},
// and makes every answer fit in one ubus message (fit).
func (o *Object) wrap(name string, h func(context.Context, ubus.Table) (any, error), paged string) ubus.Handler {
	return func(ctx context.Context, req *ubus.Request) (any, int) {
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		data, err := h(ctx, req.Args)
		if err == nil {
			var t ubus.Table
			if t, err = fit(data, paged); err == nil {
				return t, ubus.StatusOK
			}
		}
		code := statusOf(err)
		if code != ubus.StatusInvalidArgument {
			o.log.WithError(err).WithField("method", name).Warn("ubus call failed")
		}
		t, ferr := fit(ubus.Table{{Name: "error", Value: err.Error()}}, "")
		if ferr != nil {
			t = ubus.Table{{Name: "error", Value: ferr.Error()}}
		}
		return t, code
	}
}

func statusOf(err error) int {
	var ae *ArgumentError
	switch {
	case errors.As(err, &ae):
		return ubus.StatusInvalidArgument
	case errors.Is(err, ErrNotSupported):
		return ubus.StatusNotSupported
	case errors.Is(err, context.DeadlineExceeded):
		return ubus.StatusTimeout
	}
	return ubus.StatusUnknownError
}

func (o *Object) status(ctx context.Context, _ ubus.Table) (any, error) {
	return o.ctl.Status(ctx)
}

func (o *Object) capabilities(ctx context.Context, _ ubus.Table) (any, error) {
	return o.ctl.Capabilities(ctx)
}

// flowsAnswer is the answer of `flows`; LuCI reads flows and total.
type flowsAnswer struct {
	Flows     []netstate.Flow `json:"flows"`
	Total     int             `json:"total"` // flows passing the filters, returned or not
	Limit     int             `json:"limit"`
	Truncated bool            `json:"truncated"` // trimmed to fit ubus's message size
}

func (o *Object) flows(ctx context.Context, args ubus.Table) (any, error) {
	q, err := parseFlowQuery(args)
	if err != nil {
		return nil, err
	}
	flows, total, err := o.ctl.Flows(ctx, q)
	if err != nil {
		return nil, err
	}
	a := flowsAnswer{Flows: flows, Total: max(total, len(flows)), Limit: q.Limit}
	if len(a.Flows) > q.Limit {
		a.Flows = a.Flows[:q.Limit]
	}
	return a, nil
}

func (o *Object) set(ctx context.Context, args ubus.Table) (any, error) {
	mode, err := parseMode(args)
	if err != nil {
		return nil, err
	}
	// The controller announces a change of mode (fastpath.mode) from the
	// pass that made it, whoever asked for that pass.
	return o.ctl.SetMode(ctx, mode)
}

func (o *Object) reload(ctx context.Context, _ ubus.Table) (any, error) {
	return o.ctl.Reload(ctx)
}

func (o *Object) cut(ctx context.Context, args ubus.Table) (any, error) {
	r, err := parseCutRequest(args)
	if err != nil {
		return nil, err
	}
	cuts, err := o.ctl.Cut(ctx, r)
	if err != nil {
		return nil, err
	}
	a := newCutsAnswer(cuts)
	if len(cuts) > 0 {
		o.Event(EventCut, CutEvent{Action: "cut", Address: r.Address, Tuple: tupleOrNil(r), Reason: r.Reason, Trigger: r.Trigger, Count: a.Count, ConntrackOnly: a.ConntrackOnly})
	}
	return a, nil
}

func (o *Object) uncut(ctx context.Context, args ubus.Table) (any, error) {
	r, err := parseCutRequest(args)
	if err != nil {
		return nil, err
	}
	n, err := o.ctl.Uncut(ctx, r)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		o.Event(EventCut, CutEvent{Action: "release", Address: r.Address, Tuple: tupleOrNil(r), Reason: r.Reason, Trigger: r.Trigger, Count: n})
	}
	return struct {
		Released int `json:"released"`
	}{n}, nil
}

func (o *Object) verdict(ctx context.Context, args ubus.Table) (any, error) {
	r, err := parseVerdict(args)
	if err != nil {
		return nil, err
	}
	cuts, released, err := o.ctl.Verdict(ctx, r)
	if err != nil {
		return nil, err
	}
	a := verdictAnswer{cutsAnswer: newCutsAnswer(cuts), Released: released}
	tu := r.Tuple
	ev := CutEvent{Action: "cut", Tuple: &tu, Reason: r.Reason, Trigger: r.Trigger, Count: a.Count, ConntrackOnly: a.ConntrackOnly}
	if r.Verdict != cut.VerdictDrop {
		ev.Action, ev.Count = "release", released
	}
	o.Event(EventCut, ev)
	return a, nil
}

// cutsPage is the answer of `cuts`: the summary with one page of its
// cuts; cuts_total counts them all.
type cutsPage struct {
	cut.Summary
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
}

func (o *Object) cuts(ctx context.Context, args ubus.Table) (any, error) {
	offset, limit, err := parsePage(args, DefaultCutLimit, MaxCutLimit)
	if err != nil {
		return nil, err
	}
	s, err := o.ctl.Cuts(ctx)
	if err != nil {
		return nil, err
	}
	p := cutsPage{Summary: s, Offset: offset, Limit: limit}
	p.CutsTotal = len(s.Cuts)
	lo := min(offset, len(s.Cuts)) // offset+limit could pass a 32-bit int
	p.Cuts = s.Cuts[lo : lo+min(limit, len(s.Cuts)-lo)]
	return p, nil
}
