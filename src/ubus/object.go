package ubus

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync"
)

// Handler answers one call: the data to send back (nil for none) and the
// ubus status code (StatusOK on success).
type Handler func(ctx context.Context, req *Request) (any, int)

// Arg is one declared argument of a method, as `ubus -v list` shows it.
type Arg struct {
	Name string
	Type BlobmsgType
}

// Method is one method of an Object.
type Method struct {
	Name      string
	Signature []Arg
	Handler   Handler
}

// Request is one call to a method.
type Request struct {
	Object string
	Method string
	Args   Table
	User   string // added by ubusd: the caller's user and group
	Group  string
	Caller uint32 // the caller's client id
}

// Decode fills v (a struct pointer) from the arguments through encoding/json.
func (r *Request) Decode(v any) error {
	b, err := json.Marshal(r.Args)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Object is a named ubus object with methods. Register it with
// Conn.AddObject or Client.AddObject; after a reconnect the Client
// registers it again and it gets a new id.
type Object struct {
	Name    string
	Methods []Method
	// SubscribersChanged, when set, is called (in its own goroutine) when
	// the first subscriber arrives or the last one leaves.
	SubscribersChanged func(active bool)

	mu     sync.Mutex
	id     uint32
	typeID uint32
	conn   *Conn
	active bool
}

// ID is the object's id on its current connection; 0 when not registered.
func (o *Object) ID() uint32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.id
}

// HasSubscribers reports whether ubusd said someone is subscribed.
func (o *Object) HasSubscribers() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.active
}

func (o *Object) method(name string) *Method {
	for i := range o.Methods {
		if o.Methods[i].Name == name {
			return &o.Methods[i]
		}
	}
	return nil
}

// signature is the SIGNATURE attribute: one table per method whose fields
// are INT32 blobmsg types, named by argument.
func (o *Object) signature() Table {
	sig := make(Table, 0, len(o.Methods))
	for _, m := range o.Methods {
		args := make(Table, 0, len(m.Signature))
		for _, a := range m.Signature {
			args = append(args, Field{Name: a.Name, Value: int32(a.Type)})
		}
		sig = append(sig, Field{Name: m.Name, Value: args})
	}
	return sig
}

// binding is one object registered on a connection: a named Object, an
// event listener or a subscriber.
type binding struct {
	obj      *Object                                            // named object, or nil
	handle   func(ctx context.Context, req *Request) (any, int) // anonymous objects
	onRemove func(target uint32)                                // subscribers

	// Events and notifications reach an anonymous object's handler one at
	// a time, in the order ubusd sent them; method calls of named objects
	// run concurrently.
	qmu     sync.Mutex
	queue   []*Message
	running bool
}

// enqueue runs serveInvoke for m after the ones queued before it, without
// ever blocking the caller (the connection's reader).
func (b *binding) enqueue(c *Conn, id uint32, m *Message) {
	b.qmu.Lock()
	b.queue = append(b.queue, m)
	if b.running {
		b.qmu.Unlock()
		return
	}
	b.running = true
	b.qmu.Unlock()
	go func() {
		for {
			b.qmu.Lock()
			if len(b.queue) == 0 {
				b.running = false
				b.qmu.Unlock()
				return
			}
			next := b.queue[0]
			b.queue = b.queue[1:]
			b.qmu.Unlock()
			c.serveInvoke(b, id, next)
		}
	}()
}

func (b *binding) setActive(active bool) {
	if b.obj == nil {
		return
	}
	b.obj.mu.Lock()
	changed := b.obj.active != active
	b.obj.active = active
	cb := b.obj.SubscribersChanged
	b.obj.mu.Unlock()
	if changed && cb != nil {
		go cb(active)
	}
}

func (b *binding) unbind(c *Conn) {
	if b.obj == nil {
		return
	}
	b.obj.mu.Lock()
	if b.obj.conn == c {
		b.obj.conn, b.obj.id, b.obj.typeID, b.obj.active = nil, 0, 0, false
	}
	b.obj.mu.Unlock()
}

// AddObject registers obj with its methods and signatures.
func (c *Conn) AddObject(ctx context.Context, obj *Object) error {
	if obj.Name == "" {
		return fmt.Errorf("ubus object without a name: set Object.Name")
	}
	obj.mu.Lock()
	if obj.conn != nil {
		obj.mu.Unlock()
		return fmt.Errorf("ubus object %q is already registered (id %08x)", obj.Name, obj.id)
	}
	obj.mu.Unlock()
	m := &Message{Header: Header{Type: MsgAddObject}}
	m.AddString(AttrObjPath, obj.Name)
	if err := m.AddTable(AttrSignature, obj.signature()); err != nil {
		return fmt.Errorf("ubus object %q signature: %w", obj.Name, err)
	}
	id, typeID, err := c.addObject(ctx, m, &binding{obj: obj})
	if err != nil {
		return fmt.Errorf("registering ubus object %q: %w", obj.Name, err)
	}
	obj.mu.Lock()
	obj.id, obj.typeID, obj.conn = id, typeID, c
	obj.mu.Unlock()
	return nil
}

// addObject sends ADD_OBJECT and binds the new id before any INVOKE for it
// can be dispatched (the reader delivers the answer first).
func (c *Conn) addObject(ctx context.Context, m *Message, b *binding) (uint32, uint32, error) {
	data, st, err := c.requestBind(ctx, m, b)
	if err != nil {
		return 0, 0, err
	}
	if st != StatusOK {
		return 0, 0, &StatusError{Code: st}
	}
	if len(data) == 0 {
		return 0, 0, fmt.Errorf("ubusd answered ADD_OBJECT without an object id")
	}
	id, ok := data[0].U32(AttrObjID)
	if !ok {
		return 0, 0, fmt.Errorf("ubusd answered ADD_OBJECT without an object id")
	}
	typeID, _ := data[0].U32(AttrObjType)
	return id, typeID, nil
}

// RemoveObject unregisters obj.
func (c *Conn) RemoveObject(ctx context.Context, obj *Object) error {
	id := obj.ID()
	if id == 0 {
		return fmt.Errorf("ubus object %q is not registered", obj.Name)
	}
	m := &Message{Header: Header{Type: MsgRemoveObject}}
	m.AddU32(AttrObjID, id)
	_, st, err := c.request(ctx, m)
	if err != nil {
		return err
	}
	if st != StatusOK {
		return &StatusError{Code: st}
	}
	c.mu.Lock()
	b := c.bindings[id]
	delete(c.bindings, id)
	c.mu.Unlock()
	if b != nil {
		b.unbind(c)
	}
	return nil
}

// serveInvoke runs a handler and answers as libubus does: DATA (OBJID,
// DATA) when there is data, then STATUS (STATUS, OBJID), both echoing the
// INVOKE's seq and peer.
func (c *Conn) serveInvoke(b *binding, id uint32, m *Message) {
	data, st := c.invoke(b, m)
	if nr, _ := m.U8(AttrNoReply); nr != 0 {
		return
	}
	if data != nil {
		t, err := ToTable(data)
		if err == nil {
			d := &Message{Header: Header{Type: MsgData, Seq: m.Seq, Peer: m.Peer}}
			d.AddU32(AttrObjID, id)
			if err = d.AddTable(AttrData, t); err == nil {
				err = c.send(d)
			}
		}
		if err != nil {
			c.log.WithError(err).WithField("object", fmt.Sprintf("%08x", id)).Warn("ubus: could not send a method's answer")
			if st == StatusOK {
				st = StatusUnknownError
			}
			// Tell the caller why instead of a bare status.
			d := &Message{Header: Header{Type: MsgData, Seq: m.Seq, Peer: m.Peer}}
			d.AddU32(AttrObjID, id)
			if d.AddTable(AttrData, Table{{"error", "the answer could not be sent: " + err.Error()}}) == nil {
				c.send(d)
			}
		}
	}
	s := &Message{Header: Header{Type: MsgStatus, Seq: m.Seq, Peer: m.Peer}}
	s.AddU32(AttrStatus, uint32(st))
	s.AddU32(AttrObjID, id)
	if err := c.send(s); err != nil {
		c.log.WithError(err).Debug("ubus: could not send a status")
	}
}

// busyCall is a call refused beyond MaxCallsInFlight, to be answered.
type busyCall struct {
	id, peer uint32
	seq      uint16
}

// busyQueue holds refusals for busyLoop. The reader only queues them:
// were it to write, it could block on a ubusd that stops reading from a
// client while it has data to send that client, and neither would read.
type busyQueue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	calls []busyCall
	gone  bool
}

func (q *busyQueue) push(b busyCall) {
	q.mu.Lock()
	if len(q.calls) < maxBusyAnswers && !q.gone {
		q.calls = append(q.calls, b)
		q.cond.Signal()
	}
	q.mu.Unlock()
}

func (q *busyQueue) close() {
	q.mu.Lock()
	q.gone = true
	q.calls = nil
	q.cond.Broadcast()
	q.mu.Unlock()
}

// busyLoop answers refused calls with StatusBusy and a text telling the
// caller to try again, until the connection closes.
func (c *Conn) busyLoop() {
	text := fmt.Sprintf("busy: %d calls are running already (the limit); try again", MaxCallsInFlight)
	for {
		c.busy.mu.Lock()
		for len(c.busy.calls) == 0 && !c.busy.gone {
			c.busy.cond.Wait()
		}
		if c.busy.gone {
			c.busy.mu.Unlock()
			return
		}
		b := c.busy.calls[0]
		c.busy.calls = c.busy.calls[1:]
		if len(c.busy.calls) == 0 {
			c.busy.calls = nil // give the backing array back after a flood
		}
		c.busy.mu.Unlock()
		d := &Message{Header: Header{Type: MsgData, Seq: b.seq, Peer: b.peer}}
		d.AddU32(AttrObjID, b.id)
		if d.AddTable(AttrData, Table{{"error", text}}) == nil {
			c.send(d)
		}
		s := &Message{Header: Header{Type: MsgStatus, Seq: b.seq, Peer: b.peer}}
		s.AddU32(AttrStatus, uint32(StatusBusy))
		s.AddU32(AttrObjID, b.id)
		c.send(s)
	}
}

func (c *Conn) invoke(b *binding, m *Message) (data any, st int) {
	if b == nil {
		return nil, StatusNotFound
	}
	req := &Request{Caller: m.Peer}
	req.Method, _ = m.String(AttrMethod)
	req.User, _ = m.String(AttrUser)
	req.Group, _ = m.String(AttrGroup)
	args, err := m.Table(AttrData)
	if err != nil {
		return map[string]string{"error": err.Error()}, StatusInvalidArgument
	}
	req.Args = args
	defer func() {
		if p := recover(); p != nil {
			c.log.WithField("method", req.Method).Errorf("ubus: handler panicked: %v\n%s", p, debug.Stack())
			data, st = nil, StatusUnknownError
		}
	}()
	if b.obj == nil {
		return b.handle(c.ctx, req)
	}
	req.Object = b.obj.Name
	meth := b.obj.method(req.Method)
	if meth == nil || meth.Handler == nil {
		return nil, StatusMethodNotFound
	}
	if msg := checkArgs(meth.Signature, args); msg != "" {
		return map[string]string{"error": msg}, StatusInvalidArgument
	}
	return meth.Handler(c.ctx, req)
}
