package ubus

import (
	"context"
	"fmt"
)

// eventObjectID is ubusd's built-in event object (UBUS_SYSTEM_OBJECT_EVENT).
const eventObjectID = 1

// SendEvent broadcasts an event as `ubus send id data` does: an INVOKE of
// "send" on the event object with {id, data}.
func (c *Conn) SendEvent(ctx context.Context, id string, data any) error {
	t, err := ToTable(data)
	if err != nil {
		return fmt.Errorf("ubus event %q: %w", id, err)
	}
	_, err = c.Invoke(ctx, eventObjectID, "send", Table{{"id", id}, {"data", t}})
	if err != nil {
		return fmt.Errorf("ubus event %q: %w", id, err)
	}
	return nil
}

// EventHandler receives one event: its id and data.
type EventHandler func(event string, data Table)

// Listen receives events whose id matches pattern (an exact id, or a prefix
// ending in "*"), as `ubus listen` does: an anonymous object registered on
// the event object.
func (c *Conn) Listen(ctx context.Context, pattern string, h EventHandler) error {
	b := &binding{handle: func(_ context.Context, req *Request) (any, int) {
		h(req.Method, req.Args)
		return nil, StatusOK
	}}
	id, _, err := c.addObject(ctx, &Message{Header: Header{Type: MsgAddObject}}, b)
	if err != nil {
		return fmt.Errorf("ubus listen %q: %w", pattern, err)
	}
	// ubusd's policy reads "object" as INT32; ids above 2^31 wrap, as in C.
	_, err = c.Invoke(ctx, eventObjectID, "register", Table{{"object", int32(id)}, {"pattern", pattern}})
	if err != nil {
		return fmt.Errorf("ubus listen %q: %w", pattern, err)
	}
	return nil
}
