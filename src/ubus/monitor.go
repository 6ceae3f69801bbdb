package ubus

import "fmt"

// Attributes of a MONITOR message (enum ubus_monitor_attr): a different
// numbering from the ubus attributes, starting at 0.
const (
	MonitorClient AttrID = 0 // be32 client the message came from or went to
	MonitorPeer   AttrID = 1 // be32 header peer
	MonitorSend   AttrID = 2 // u8: 1 when ubusd sent it, 0 when it received it
	MonitorSeq    AttrID = 3 // be32 header seq
	MonitorType   AttrID = 4 // be32 header type
	MonitorData   AttrID = 5 // the message's ubus attributes
)

// Monitored is one message ubusd reports to `ubus monitor`.
type Monitored struct {
	Client  uint32
	Send    bool     // ubusd sent it to Client (else received from Client)
	Message *Message // header and attributes as they went over the wire
}

// DecodeMonitor unpacks a MONITOR message as ubusd_monitor.c builds it.
func DecodeMonitor(m *Message) (*Monitored, error) {
	if m.Type != MsgMonitor {
		return nil, fmt.Errorf("ubus %s message is not MONITOR", m.Type)
	}
	client, ok1 := m.U32(MonitorClient)
	peer, ok2 := m.U32(MonitorPeer)
	seq, ok3 := m.U32(MonitorSeq)
	typ, ok4 := m.U32(MonitorType)
	send, ok5 := m.U8(MonitorSend)
	data, ok6 := m.Get(MonitorData)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return nil, fmt.Errorf("ubus MONITOR message lacks one of client, peer, seq, type, send, data")
	}
	attrs, err := splitAttrs(data)
	if err != nil {
		return nil, fmt.Errorf("ubus MONITOR data: %w", err)
	}
	inner := &Message{Header: Header{Type: MsgType(typ), Seq: uint16(seq), Peer: peer}}
	for _, a := range attrs {
		inner.Attrs = append(inner.Attrs, Attr{ID: AttrID(a.id), Data: a.data})
	}
	return &Monitored{Client: client, Send: send != 0, Message: inner}, nil
}
