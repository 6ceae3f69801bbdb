package ubus

import (
	"encoding/binary"
	"fmt"
	"io"
)

// MsgType is the type byte of a ubus message header.
type MsgType uint8

// Message types, as in ubusmsg.h.
const (
	MsgHello        MsgType = 0
	MsgStatus       MsgType = 1
	MsgData         MsgType = 2
	MsgPing         MsgType = 3
	MsgLookup       MsgType = 4
	MsgInvoke       MsgType = 5
	MsgAddObject    MsgType = 6
	MsgRemoveObject MsgType = 7
	MsgSubscribe    MsgType = 8
	MsgUnsubscribe  MsgType = 9
	MsgNotify       MsgType = 10
	MsgMonitor      MsgType = 11
)

var msgTypeNames = [...]string{"HELLO", "STATUS", "DATA", "PING", "LOOKUP", "INVOKE", "ADD_OBJECT",
	"REMOVE_OBJECT", "SUBSCRIBE", "UNSUBSCRIBE", "NOTIFY", "MONITOR"}

func (t MsgType) String() string {
	if int(t) < len(msgTypeNames) {
		return msgTypeNames[t]
	}
	return fmt.Sprintf("MSG_%d", uint8(t))
}

// AttrID is the id of a ubus attribute inside a message.
type AttrID uint8

// ubus attributes, as in ubusmsg.h.
const (
	AttrStatus      AttrID = 1  // be32 status code
	AttrObjPath     AttrID = 2  // string
	AttrObjID       AttrID = 3  // be32
	AttrMethod      AttrID = 4  // string
	AttrObjType     AttrID = 5  // be32
	AttrSignature   AttrID = 6  // blobmsg tables, one per method
	AttrData        AttrID = 7  // blobmsg fields
	AttrTarget      AttrID = 8  // be32
	AttrActive      AttrID = 9  // u8
	AttrNoReply     AttrID = 10 // u8
	AttrSubscribers AttrID = 11 // nested be32 ids
	AttrUser        AttrID = 12 // string
	AttrGroup       AttrID = 13 // string
)

const (
	// HeaderLen is the size of the fixed message header.
	HeaderLen = 8
	// MaxMessageLen is ubusd's UBUS_MAX_MSGLEN: it drops a client that
	// sends a larger message.
	MaxMessageLen = 1 << 20
)

// Header is the fixed part of every message.
type Header struct {
	Version uint8
	Type    MsgType
	Seq     uint16
	Peer    uint32
}

// Attr is one ubus attribute with its raw payload.
type Attr struct {
	ID   AttrID
	Data []byte
}

// Message is a header and its ubus attributes in wire order.
type Message struct {
	Header
	Attrs []Attr
}

// ErrMessageTooLarge is returned for a message over MaxMessageLen.
type ErrMessageTooLarge struct{ Len int }

func (e ErrMessageTooLarge) Error() string {
	return fmt.Sprintf("ubus message of %d bytes exceeds ubusd's limit of %d bytes (UBUS_MAX_MSGLEN): send less data per call, e.g. lower the limit argument", e.Len, MaxMessageLen)
}

// DecodeMessage parses one complete message.
func DecodeMessage(b []byte) (*Message, error) {
	if len(b) < HeaderLen+blobHeaderLen {
		return nil, fmt.Errorf("ubus message of %d bytes: shorter than header and attribute header (%d)", len(b), HeaderLen+blobHeaderLen)
	}
	m := &Message{Header: Header{
		Version: b[0],
		Type:    MsgType(b[1]),
		Seq:     binary.BigEndian.Uint16(b[2:]),
		Peer:    binary.BigEndian.Uint32(b[4:]),
	}}
	top, err := splitAttrs(b[HeaderLen:])
	if err != nil {
		return nil, fmt.Errorf("ubus %s message: %w", m.Type, err)
	}
	if len(top) != 1 || top[0].id != 0 || top[0].extended {
		return nil, fmt.Errorf("ubus %s message: want exactly one top-level attribute with id 0, got %d", m.Type, len(top))
	}
	if align4(len(top[0].data)+blobHeaderLen) != len(b)-HeaderLen {
		return nil, fmt.Errorf("ubus %s message: %d trailing bytes after the top-level attribute", m.Type, len(b)-HeaderLen-align4(len(top[0].data)+blobHeaderLen))
	}
	attrs, err := splitAttrs(top[0].data)
	if err != nil {
		return nil, fmt.Errorf("ubus %s message: %w", m.Type, err)
	}
	for _, a := range attrs {
		if a.extended {
			return nil, fmt.Errorf("ubus %s message: attribute %d has the blobmsg flag set", m.Type, a.id)
		}
		m.Attrs = append(m.Attrs, Attr{ID: AttrID(a.id), Data: a.data})
	}
	return m, nil
}

// Encode gives the message's wire bytes, refusing one over MaxMessageLen.
func (m *Message) Encode() ([]byte, error) {
	b := make([]byte, HeaderLen, 64)
	b[0] = m.Version
	b[1] = byte(m.Type)
	binary.BigEndian.PutUint16(b[2:], m.Seq)
	binary.BigEndian.PutUint32(b[4:], m.Peer)
	b, start := beginAttr(b)
	for _, a := range m.Attrs {
		b = appendAttr(b, uint8(a.ID), false, a.Data)
		if len(b)-HeaderLen > MaxMessageLen {
			return nil, ErrMessageTooLarge{Len: len(b)}
		}
	}
	return endAttr(b, start, 0, false), nil
}

// ReadMessage reads one message from a stream, refusing lengths over
// MaxMessageLen before reading them.
func ReadMessage(r io.Reader) (*Message, error) {
	var hdr [HeaderLen + blobHeaderLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(hdr[HeaderLen:]) & blobLenMask)
	if n < blobHeaderLen {
		return nil, fmt.Errorf("ubus message: attribute length %d is shorter than its header", n)
	}
	if n > MaxMessageLen {
		return nil, ErrMessageTooLarge{Len: n + HeaderLen}
	}
	b := make([]byte, HeaderLen+align4(n))
	copy(b, hdr[:])
	if _, err := io.ReadFull(r, b[len(hdr):]); err != nil {
		return nil, fmt.Errorf("ubus message: reading %d bytes: %w", len(b), err)
	}
	return DecodeMessage(b)
}

// Add appends a raw attribute.
func (m *Message) Add(id AttrID, data []byte) *Message {
	m.Attrs = append(m.Attrs, Attr{ID: id, Data: data})
	return m
}

// AddU32 appends a be32 attribute.
func (m *Message) AddU32(id AttrID, v uint32) *Message {
	return m.Add(id, binary.BigEndian.AppendUint32(nil, v))
}

// AddU8 appends a one-byte attribute.
func (m *Message) AddU8(id AttrID, v uint8) *Message {
	return m.Add(id, []byte{v})
}

// AddString appends a NUL-terminated string attribute.
func (m *Message) AddString(id AttrID, s string) *Message {
	return m.Add(id, append([]byte(s), 0))
}

// AddTable appends a blobmsg table (DATA or SIGNATURE).
func (m *Message) AddTable(id AttrID, t Table) error {
	b, err := EncodeTable(t)
	if err != nil {
		return err
	}
	if len(b) > MaxMessageLen {
		return ErrMessageTooLarge{Len: len(b)}
	}
	m.Add(id, b)
	return nil
}

// Get returns the first attribute with that id.
func (m *Message) Get(id AttrID) ([]byte, bool) {
	for _, a := range m.Attrs {
		if a.ID == id {
			return a.Data, true
		}
	}
	return nil, false
}

// U32 returns a be32 attribute; ok is false when it is absent or not 4 bytes.
func (m *Message) U32(id AttrID) (uint32, bool) {
	d, ok := m.Get(id)
	if !ok || len(d) != 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(d), true
}

// U8 returns a one-byte attribute.
func (m *Message) U8(id AttrID) (uint8, bool) {
	d, ok := m.Get(id)
	if !ok || len(d) != 1 {
		return 0, false
	}
	return d[0], true
}

// String returns a NUL-terminated string attribute.
func (m *Message) String(id AttrID) (string, bool) {
	d, ok := m.Get(id)
	if !ok || len(d) == 0 || d[len(d)-1] != 0 {
		return "", false
	}
	return string(d[:len(d)-1]), true
}

// Table decodes a blobmsg attribute (DATA or SIGNATURE); an absent one is
// an empty table.
func (m *Message) Table(id AttrID) (Table, error) {
	d, ok := m.Get(id)
	if !ok {
		return Table{}, nil
	}
	t, err := DecodeTable(d)
	if err != nil {
		return nil, fmt.Errorf("ubus %s attribute %d: %w", m.Type, id, err)
	}
	return t, nil
}

// Subscribers decodes the SUBSCRIBERS attribute: nested be32 object ids.
func (m *Message) Subscribers() ([]uint32, error) {
	d, ok := m.Get(AttrSubscribers)
	if !ok {
		return nil, nil
	}
	attrs, err := splitAttrs(d)
	if err != nil {
		return nil, err
	}
	ids := make([]uint32, 0, len(attrs))
	for _, a := range attrs {
		if len(a.data) != 4 {
			return nil, fmt.Errorf("subscriber id of %d bytes, want 4", len(a.data))
		}
		ids = append(ids, binary.BigEndian.Uint32(a.data))
	}
	return ids, nil
}

// EncodeIDList encodes ids as ubusd nests them in SUBSCRIBERS.
func EncodeIDList(ids []uint32) []byte {
	var b []byte
	for _, id := range ids {
		b = appendAttr(b, 0, false, binary.BigEndian.AppendUint32(nil, id))
	}
	return b
}
