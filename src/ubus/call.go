package ubus

import (
	"context"
	"fmt"
)

// ObjectInfo is one object as LOOKUP describes it.
type ObjectInfo struct {
	Path      string
	ID        uint32
	TypeID    uint32
	Signature Table // method name -> table of argument name -> INT32 blobmsg type
}

// Lookup finds objects: an exact path, a prefix ending in "*", or every
// object for "". A missing object gives a *StatusError with StatusNotFound.
func (c *Conn) Lookup(ctx context.Context, path string) ([]ObjectInfo, error) {
	m := &Message{Header: Header{Type: MsgLookup}}
	if path != "" {
		m.AddString(AttrObjPath, path)
	}
	data, st, err := c.request(ctx, m)
	if err != nil {
		return nil, err
	}
	if st != StatusOK {
		return nil, &StatusError{Code: st, Message: fmt.Sprintf("object %q", path)}
	}
	out := make([]ObjectInfo, 0, len(data))
	for _, d := range data {
		var o ObjectInfo
		o.Path, _ = d.String(AttrObjPath)
		o.ID, _ = d.U32(AttrObjID)
		o.TypeID, _ = d.U32(AttrObjType)
		if o.Signature, err = d.Table(AttrSignature); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// LookupID gives the id of the object at an exact path.
func (c *Conn) LookupID(ctx context.Context, path string) (uint32, error) {
	objs, err := c.Lookup(ctx, path)
	if err != nil {
		return 0, err
	}
	for _, o := range objs {
		if o.Path == path {
			return o.ID, nil
		}
	}
	return 0, &StatusError{Code: StatusNotFound, Message: fmt.Sprintf("object %q", path)}
}

// Call calls object.method with args (nil, a Table, or any value that
// encodes as a JSON object) like `ubus call`, and returns the answer's data.
// A non-zero status is a *StatusError; the data that came with it, if any,
// is returned as well.
func (c *Conn) Call(ctx context.Context, object, method string, args any) (Table, error) {
	id, err := c.LookupID(ctx, object)
	if err != nil {
		return nil, err
	}
	return c.Invoke(ctx, id, method, args)
}

// Invoke calls a method of the object with that id.
func (c *Conn) Invoke(ctx context.Context, id uint32, method string, args any) (Table, error) {
	t, err := ToTable(args)
	if err != nil {
		return nil, fmt.Errorf("ubus call %s: %w", method, err)
	}
	m := &Message{Header: Header{Type: MsgInvoke, Peer: id}}
	m.AddU32(AttrObjID, id)
	m.AddString(AttrMethod, method)
	if err := m.AddTable(AttrData, t); err != nil {
		return nil, fmt.Errorf("ubus call %s: %w", method, err)
	}
	data, st, err := c.request(ctx, m)
	if err != nil {
		return nil, err
	}
	var out Table
	for _, d := range data {
		t, err := d.Table(AttrData)
		if err != nil {
			return nil, err
		}
		out = append(out, t...)
	}
	if st != StatusOK {
		se := &StatusError{Code: st}
		if e, ok := out.Get("error"); ok {
			se.Message, _ = e.(string)
		}
		return out, se
	}
	if out == nil {
		out = Table{}
	}
	return out, nil
}
