package rpc

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/fastpath-wrt/fastpath/src/status"
	"github.com/fastpath-wrt/fastpath/src/ubus"
)

// callTimeout bounds one controller call, so a stuck kernel query cannot
// hold a caller (LuCI) forever.
const callTimeout = 20 * time.Second

// answerBudget keeps answers under ubusd's message limit, with room for
// the message's own attributes.
const answerBudget = ubus.MaxMessageLen - 4096

// Object is the fastpath ubus object bound to a controller.
type Object struct {
	ctl    Controller
	log    logrus.FieldLogger
	obj    *ubus.Object
	events chan event
	client *ubus.Client

	stop     chan struct{}
	stopOnce sync.Once
}

// New builds the object; Register puts it on ubus.
func New(ctl Controller, log logrus.FieldLogger) *Object {
	if log == nil {
		log = logrus.StandardLogger()
	}
	o := &Object{ctl: ctl, log: log, events: make(chan event, eventQueue), stop: make(chan struct{})}
	handlers := map[string]func(context.Context, ubus.Table) (any, error){
		"status":       o.status,
		"capabilities": o.capabilities,
		"flows":        o.flows,
		"set":          o.set,
		"reload":       o.reload,
		"cut":          o.cut,
		"uncut":        o.uncut,
		"verdict":      o.verdict,
		"cuts":         o.cuts,
	}
	o.obj = &ubus.Object{Name: ObjectName}
	for _, name := range append(append([]string(nil), ReadMethods...), WriteMethods...) {
		h := handlers[name]
		o.obj.Methods = append(o.obj.Methods, ubus.Method{
			Name:      name,
			Signature: signatures[name],
			Handler:   o.wrap(name, h),
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

// wrap turns a handler's error into the ubus status and {"error": text}.
func (o *Object) wrap(name string, h func(context.Context, ubus.Table) (any, error)) ubus.Handler {
	return func(ctx context.Context, req *ubus.Request) (any, int) {
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		data, err := h(ctx, req.Args)
		if err == nil {
			return data, ubus.StatusOK
		}
		code := statusOf(err)
		if code != ubus.StatusInvalidArgument {
			o.log.WithError(err).WithField("method", name).Warn("ubus call failed")
		}
		return ubus.Table{{Name: "error", Value: err.Error()}}, code
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
	Flows     []status.Flow `json:"flows"`
	Total     int           `json:"total"` // flows the controller returned before trimming
	Limit     int           `json:"limit"`
	Truncated bool          `json:"truncated"` // trimmed to fit ubus's message size
}

func (o *Object) flows(ctx context.Context, args ubus.Table) (any, error) {
	q, err := parseFlowQuery(args)
	if err != nil {
		return nil, err
	}
	flows, err := o.ctl.Flows(ctx, q)
	if err != nil {
		return nil, err
	}
	a := flowsAnswer{Flows: flows, Total: len(flows), Limit: q.Limit}
	if len(a.Flows) > q.Limit {
		a.Flows = a.Flows[:q.Limit]
	}
	return fitAnswer(a)
}

// fitAnswer keeps the longest prefix of the flow list that fits in one
// ubus message (ubusd drops a client that sends more than 1 MiB) and flags
// the answer as truncated when it had to cut.
func fitAnswer(a flowsAnswer) (ubus.Table, error) {
	flows := a.Flows
	a.Flows = nil
	head, err := ubus.ToTable(a)
	if err != nil {
		return nil, err
	}
	conv, err := ubus.FromGo(flows)
	if err != nil {
		return nil, err
	}
	list, _ := conv.(ubus.Array) // nil flows convert to nil: JSON null, as LuCI expects
	headBytes, err := ubus.EncodeTable(head)
	if err != nil {
		return nil, err
	}
	used := len(headBytes) + 64 // the "flows" attribute's own header
	for i, f := range list {
		b, err := ubus.EncodeTable(ubus.Table{{Value: f}})
		if err != nil {
			return nil, err
		}
		if used += len(b); used > answerBudget {
			list = list[:i]
			setField(head, "truncated", true)
			break
		}
	}
	var flowsValue any
	if list != nil {
		flowsValue = list
	}
	setField(head, "flows", flowsValue)
	return head, nil
}

func setField(t ubus.Table, name string, v any) {
	for i := range t {
		if t[i].Name == name {
			t[i].Value = v
		}
	}
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
	if len(cuts) > 0 {
		o.Event(EventCut, CutEvent{Action: "cut", Address: r.Address, Tuple: tupleOrNil(r), Reason: r.Reason, Trigger: r.Trigger, Count: len(cuts)})
	}
	return cutsAnswer{Cuts: cuts, Count: len(cuts)}, nil
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
	cuts, err := o.ctl.Verdict(ctx, r)
	if err != nil {
		return nil, err
	}
	action := "cut"
	if r.Verdict != "drop" {
		action = "release"
	}
	tu := r.Tuple
	o.Event(EventCut, CutEvent{Action: action, Tuple: &tu, Reason: r.Reason, Trigger: r.Trigger, Count: len(cuts)})
	return cutsAnswer{Cuts: cuts, Count: len(cuts)}, nil
}

func (o *Object) cuts(ctx context.Context, _ ubus.Table) (any, error) {
	return o.ctl.Cuts(ctx)
}
