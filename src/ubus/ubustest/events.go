package ubustest

import (
	"strings"

	"github.com/fastpath-wrt/fastpath/src/ubus"
)

// eventCall is ubusd's event object: "register" adds a listener pattern,
// "send" forwards an event to every matching listener of other clients.
func (b *Broker) eventCall(c *client, method string, m *ubus.Message) int {
	args, err := m.Table(ubus.AttrData)
	if err != nil {
		return ubus.StatusInvalidArgument
	}
	switch method {
	case "register":
		objV, ok1 := args.Get("object")
		patV, ok2 := args.Get("pattern")
		id, okID := objV.(int32)
		pat, okPat := patV.(string)
		if !ok1 || !ok2 || !okID || !okPat || pat == "" {
			return ubus.StatusInvalidArgument
		}
		if uint32(id) < systemObjectMax {
			return ubus.StatusPermissionDenied
		}
		o := b.objects[uint32(id)]
		if o == nil {
			return ubus.StatusNotFound
		}
		if o.client != c {
			return ubus.StatusPermissionDenied
		}
		p := &pattern{text: pat, obj: o}
		if strings.HasSuffix(pat, "*") {
			p.partial, p.text = true, strings.TrimSuffix(pat, "*")
		}
		b.patterns = append(b.patterns, p)
		return ubus.StatusOK
	case "send":
		idV, ok1 := args.Get("id")
		dataV, ok2 := args.Get("data")
		id, okID := idV.(string)
		data, okData := dataV.(ubus.Table)
		if !ok1 || !ok2 || !okID || !okData {
			return ubus.StatusInvalidArgument
		}
		if strings.HasPrefix(id, "ubus.") {
			return ubus.StatusPermissionDenied
		}
		b.sendEvent(c, id, data)
		return ubus.StatusOK
	}
	return ubus.StatusInvalidCommand
}

// sendEvent delivers an event once to each listening object, never back to
// the sender's own objects: INVOKE {OBJID, METHOD=id, DATA} with peer 0 and
// a broker-wide event sequence number.
func (b *Broker) sendEvent(from *client, id string, data ubus.Table) {
	b.evRound++
	payload, err := ubus.EncodeTable(data)
	if err != nil {
		return
	}
	for _, p := range b.patterns {
		if p.obj.client == from || p.obj.eventSeen == b.evRound {
			continue
		}
		if !(id == p.text || p.partial && strings.HasPrefix(id, p.text)) {
			continue
		}
		p.obj.eventSeen = b.evRound
		b.eventSeq++
		m := &ubus.Message{Header: ubus.Header{Type: ubus.MsgInvoke, Seq: b.eventSeq}}
		m.AddU32(ubus.AttrObjID, p.obj.id)
		m.AddString(ubus.AttrMethod, id)
		m.Add(ubus.AttrData, payload)
		b.send(p.obj.client, m)
	}
}

// objectEvent is ubusd's "ubus.object.add" / "ubus.object.remove".
func (b *Broker) objectEvent(id string, o *object) {
	b.sendEvent(nil, id, ubus.Table{{Name: "id", Value: int32(o.id)}, {Name: "path", Value: o.path}})
}
