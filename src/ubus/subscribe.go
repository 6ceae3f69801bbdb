package ubus

import (
	"context"
	"fmt"
)

// NotifyHandler receives one notification sent to subscribers: its type and
// data. Its return values answer the notifier, as a method's do.
type NotifyHandler func(typ string, data Table) (any, int)

// Subscribe subscribes to the object at path, as `ubus subscribe` does: an
// anonymous object that ubusd links to the target. removed, when not nil,
// is called when the target goes away.
func (c *Conn) Subscribe(ctx context.Context, path string, h NotifyHandler, removed func()) error {
	b := &binding{handle: func(_ context.Context, req *Request) (any, int) {
		return h(req.Method, req.Args)
	}}
	if removed != nil {
		b.onRemove = func(uint32) { removed() }
	}
	// Like libubus: the subscriber object first, then the lookup.
	id, _, err := c.addObject(ctx, &Message{Header: Header{Type: MsgAddObject}}, b)
	if err != nil {
		return fmt.Errorf("ubus subscribe %q: %w", path, err)
	}
	target, err := c.LookupID(ctx, path)
	if err != nil {
		c.removeID(ctx, id)
		return fmt.Errorf("ubus subscribe %q: %w", path, err)
	}
	m := &Message{Header: Header{Type: MsgSubscribe}}
	m.AddU32(AttrObjID, id)
	m.AddU32(AttrTarget, target)
	_, st, err := c.request(ctx, m)
	if err == nil && st != StatusOK {
		err = &StatusError{Code: st}
	}
	if err != nil {
		c.removeID(ctx, id)
		return fmt.Errorf("ubus subscribe %q: %w", path, err)
	}
	return nil
}

// removeID drops an anonymous object after a failed setup.
func (c *Conn) removeID(ctx context.Context, id uint32) {
	m := &Message{Header: Header{Type: MsgRemoveObject}}
	m.AddU32(AttrObjID, id)
	c.request(ctx, m)
	c.mu.Lock()
	delete(c.bindings, id)
	c.mu.Unlock()
}

// Notify sends a notification of type typ to obj's subscribers, as
// libubus's ubus_notify does, and returns how many subscribers ubusd
// forwarded it to. It waits for ubusd's STATUS, not for the subscribers'
// answers.
func (c *Conn) Notify(ctx context.Context, obj *Object, typ string, data any) (int, error) {
	id := obj.ID()
	if id == 0 {
		return 0, fmt.Errorf("ubus notify %q: object %q is not registered", typ, obj.Name)
	}
	t, err := ToTable(data)
	if err != nil {
		return 0, fmt.Errorf("ubus notify %q: %w", typ, err)
	}
	m := &Message{Header: Header{Type: MsgNotify, Peer: id}}
	m.AddU32(AttrObjID, id)
	m.AddString(AttrMethod, typ)
	if err := m.AddTable(AttrData, t); err != nil {
		return 0, fmt.Errorf("ubus notify %q: %w", typ, err)
	}
	// ubusd answers with the STATUS listing the subscribers; the
	// subscribers' own answers follow with their object ids as peer and
	// find no waiting request.
	r, err := c.do(ctx, m, &request{})
	if err != nil {
		return 0, fmt.Errorf("ubus notify %q: %w", typ, err)
	}
	if r.status != StatusOK {
		return 0, fmt.Errorf("ubus notify %q: %w", typ, &StatusError{Code: r.status})
	}
	subs, err := r.final.Subscribers()
	if err != nil {
		return 0, fmt.Errorf("ubus notify %q: ubusd's subscriber list: %w", typ, err)
	}
	return len(subs), nil
}
