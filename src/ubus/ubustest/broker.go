// Package ubustest is a ubusd stand-in for tests and the lab: a broker on a
// unix socket that answers as OpenWrt's ubusd does in the recorded traffic
// (ids, lookups, routing of calls, events, subscriptions, status codes).
package ubustest

import (
	"encoding/binary"
	"errors"
	"math/rand"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fastpath-wrt/fastpath/src/ubus"
)

// systemObjectMax is ubusd's UBUS_SYSTEM_OBJECT_MAX: ids below it are
// reserved; 1 is the event object.
const (
	systemObjectMax = 1024
	eventObjectID   = 1
)

// sendTimeout bounds one write to a client.
const sendTimeout = 5 * time.Second

// clientBacklog is ubusd's UBUSD_CLIENT_BACKLOG: while that many messages
// wait to be written to a client, ubusd reads nothing more from it. Writes
// never block the broker (they are queued), so a client that pipelines
// calls to an object on another connection cannot deadlock the two.
const clientBacklog = 32

// Broker is a running stand-in for ubusd.
type Broker struct {
	// User and Group are added to every forwarded INVOKE, as ubusd does
	// for its clients' credentials; both default to "root".
	User, Group string

	ln   net.Listener
	path string
	wg   sync.WaitGroup

	mu       sync.Mutex
	rnd      *rand.Rand
	clients  map[uint32]*client
	objects  map[uint32]*object
	paths    map[string]*object
	patterns []*pattern
	eventSeq uint16
	evRound  int
	closed   bool
}

type client struct {
	id      uint32
	nc      net.Conn
	wmu     sync.Mutex // guards txq and gone; txCond waits on it
	txCond  *sync.Cond
	txq     [][]byte // encoded messages to write, oldest first
	gone    bool
	objects []*object
}

func newClient(id uint32, nc net.Conn) *client {
	c := &client{id: id, nc: nc}
	c.txCond = sync.NewCond(&c.wmu)
	return c
}

// writeLoop writes the client's queue in order until the client goes.
func (c *client) writeLoop() {
	for {
		c.wmu.Lock()
		for len(c.txq) == 0 && !c.gone {
			c.txCond.Wait()
		}
		if c.gone {
			c.wmu.Unlock()
			return
		}
		buf := c.txq[0]
		c.txq[0] = nil
		c.txq = c.txq[1:]
		c.txCond.Broadcast() // the reader may wait for the backlog to shrink
		c.wmu.Unlock()
		c.nc.SetWriteDeadline(time.Now().Add(sendTimeout))
		if _, err := c.nc.Write(buf); err != nil {
			c.close()
			return
		}
	}
}

// waitBacklog holds the reader while the client's backlog is full.
func (c *client) waitBacklog() {
	c.wmu.Lock()
	for len(c.txq) >= clientBacklog && !c.gone {
		c.txCond.Wait()
	}
	c.wmu.Unlock()
}

func (c *client) close() {
	c.nc.Close()
	c.wmu.Lock()
	c.gone = true
	c.txq = nil
	c.txCond.Broadcast()
	c.wmu.Unlock()
}

type object struct {
	id          uint32
	path        string
	typeID      uint32 // 0 for anonymous objects
	signature   []byte
	client      *client
	subscribers []*object // objects subscribed to this one
	targets     []*object // objects this one subscribes to
	invokeSeq   uint16
	eventSeen   int
}

type pattern struct {
	text    string
	partial bool
	obj     *object
}

// Listen starts a broker on a unix socket at path, replacing a stale
// socket file.
func Listen(path string) (*Broker, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		os.Remove(path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	b := &Broker{
		User: "root", Group: "root",
		ln: ln, path: path,
		rnd:     rand.New(rand.NewSource(rand.Int63())),
		clients: map[uint32]*client{},
		objects: map[uint32]*object{},
		paths:   map[string]*object{},
	}
	b.wg.Add(1)
	go b.accept()
	return b, nil
}

// Path is the socket path.
func (b *Broker) Path() string { return b.path }

// Close stops listening, drops every client and removes the socket file.
func (b *Broker) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	err := b.ln.Close()
	b.DropClients()
	b.wg.Wait()
	os.Remove(b.path)
	return err
}

// DropClients closes every client connection, as a ubusd restart does:
// their objects, subscriptions and listeners are gone.
func (b *Broker) DropClients() {
	b.mu.Lock()
	var conns []net.Conn
	for _, c := range b.clients {
		conns = append(conns, c.nc)
	}
	b.mu.Unlock()
	for _, nc := range conns {
		nc.Close()
	}
}

// Objects lists the paths of the registered named objects, sorted.
func (b *Broker) Objects() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for p := range b.paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func (b *Broker) accept() {
	defer b.wg.Done()
	for {
		nc, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			nc.Close()
			return
		}
		c := newClient(b.newID(b.clientTaken), nc)
		b.clients[c.id] = c
		b.mu.Unlock()
		b.wg.Add(2)
		go b.serve(c)
		go func() { defer b.wg.Done(); c.writeLoop() }()
	}
}

func (b *Broker) clientTaken(id uint32) bool { return b.clients[id] != nil }
func (b *Broker) objectTaken(id uint32) bool { return b.objects[id] != nil }

// newID picks a random unused id, as ubusd does, above the reserved range.
func (b *Broker) newID(taken func(uint32) bool) uint32 {
	for {
		id := b.rnd.Uint32()
		if id >= systemObjectMax && !taken(id) {
			return id
		}
	}
}

func (b *Broker) serve(c *client) {
	defer b.wg.Done()
	defer b.dropClient(c)
	hello := &ubus.Message{Header: ubus.Header{Type: ubus.MsgHello, Peer: c.id}}
	if !b.send(c, hello) {
		return
	}
	for {
		c.waitBacklog()
		m, err := ubus.ReadMessage(c.nc)
		if err != nil {
			return // ubusd drops a client on any read or parse error
		}
		b.mu.Lock()
		st := b.handle(c, m)
		b.mu.Unlock()
		if st >= 0 {
			// ubusd's retmsg: STATUS echoing the request's seq and peer.
			r := &ubus.Message{Header: ubus.Header{Type: ubus.MsgStatus, Seq: m.Seq, Peer: m.Peer}}
			r.AddU32(ubus.AttrStatus, uint32(st))
			b.send(c, r)
		}
	}
}

// send queues one message to a client and never blocks; it is called with
// or without b.mu held. A client that stops reading for sendTimeout is
// dropped by its writer.
func (b *Broker) send(c *client, m *ubus.Message) bool {
	buf, err := m.Encode()
	if err != nil {
		return false
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.gone {
		return false
	}
	c.txq = append(c.txq, buf)
	c.txCond.Broadcast()
	return true
}

func (b *Broker) dropClient(c *client) {
	c.close()
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(c.objects) > 0 {
		b.freeObject(c.objects[0])
	}
	delete(b.clients, c.id)
}

// reply is a message to the client with the request's seq and peer.
func reply(t ubus.MsgType, req *ubus.Message) *ubus.Message {
	return &ubus.Message{Header: ubus.Header{Type: t, Seq: req.Seq, Peer: req.Peer}}
}

// handle runs one request with b.mu held and returns the status to send,
// or -1 when the handler answered (or must not answer) itself.
func (b *Broker) handle(c *client, m *ubus.Message) int {
	switch m.Type {
	case ubus.MsgPing:
		r := *m
		r.Type = ubus.MsgData
		b.send(c, &r)
		return -1
	case ubus.MsgAddObject:
		return b.addObject(c, m)
	case ubus.MsgRemoveObject:
		return b.removeObject(c, m)
	case ubus.MsgLookup:
		return b.lookup(c, m)
	case ubus.MsgInvoke:
		return b.invoke(c, m)
	case ubus.MsgStatus, ubus.MsgData:
		b.response(c, m)
		return -1
	case ubus.MsgSubscribe:
		return b.subscribe(c, m)
	case ubus.MsgUnsubscribe:
		return b.unsubscribe(c, m)
	case ubus.MsgNotify:
		return b.notify(c, m)
	}
	return ubus.StatusInvalidCommand
}

var errNoID = errors.New("no object id")

func u32(m *ubus.Message, id ubus.AttrID) (uint32, error) {
	v, ok := m.U32(id)
	if !ok {
		return 0, errNoID
	}
	return v, nil
}

// methodOf is the method and object an INVOKE or NOTIFY names; ok is
// false when either is missing.
func methodOf(m *ubus.Message) (method string, id uint32, ok bool) {
	method, ok = m.String(ubus.AttrMethod)
	id, hasID := m.U32(ubus.AttrObjID)
	return method, id, ok && hasID
}

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

func (b *Broker) addObject(c *client, m *ubus.Message) int {
	o := &object{client: c}
	if p, ok := m.String(ubus.AttrObjPath); ok {
		if p == "" || b.paths[p] != nil {
			return ubus.StatusInvalidArgument
		}
		o.path = p
	}
	if sig, ok := m.Get(ubus.AttrSignature); ok {
		if _, err := ubus.DecodeTable(sig); err != nil {
			return ubus.StatusInvalidArgument
		}
		o.signature = sig
		o.typeID = b.newID(b.objectTaken)
	}
	o.id = b.newID(func(id uint32) bool { return b.objectTaken(id) || id == o.typeID })
	b.objects[o.id] = o
	c.objects = append(c.objects, o)
	if o.path != "" {
		b.paths[o.path] = o
	}
	r := reply(ubus.MsgData, m)
	r.AddU32(ubus.AttrObjID, o.id)
	if o.typeID != 0 {
		r.AddU32(ubus.AttrObjType, o.typeID)
	}
	b.send(c, r)
	if o.path != "" {
		b.objectEvent("ubus.object.add", o)
	}
	return ubus.StatusOK
}

func (b *Broker) removeObject(c *client, m *ubus.Message) int {
	id, err := u32(m, ubus.AttrObjID)
	if err != nil {
		return ubus.StatusInvalidArgument
	}
	o := b.objects[id]
	if o == nil {
		return ubus.StatusNotFound
	}
	if o.client != c {
		return ubus.StatusPermissionDenied
	}
	r := reply(ubus.MsgData, m)
	r.AddU32(ubus.AttrObjID, o.id)
	if o.typeID != 0 {
		r.AddU32(ubus.AttrObjType, o.typeID)
	}
	b.send(c, r)
	b.freeObject(o)
	return ubus.StatusOK
}

// freeObject follows ubusd_free_object: drop its own subscriptions, tell
// its subscribers it is gone, forget its event patterns and its path.
func (b *Broker) freeObject(o *object) {
	for len(o.targets) > 0 {
		b.unlink(o, o.targets[0])
	}
	for len(o.subscribers) > 0 {
		s := o.subscribers[0]
		u := &ubus.Message{Header: ubus.Header{Type: ubus.MsgUnsubscribe, Peer: 0}}
		s.invokeSeq++
		u.Seq = s.invokeSeq
		u.AddU32(ubus.AttrObjID, s.id)
		u.AddU32(ubus.AttrTarget, o.id)
		b.send(s.client, u)
		b.unlink(s, o)
	}
	kept := b.patterns[:0]
	for _, p := range b.patterns {
		if p.obj != o {
			kept = append(kept, p)
		}
	}
	b.patterns = kept
	if o.path != "" {
		b.objectEvent("ubus.object.remove", o)
		delete(b.paths, o.path)
	}
	delete(b.objects, o.id)
	for i, x := range o.client.objects {
		if x == o {
			o.client.objects = append(o.client.objects[:i], o.client.objects[i+1:]...)
			break
		}
	}
}

func (b *Broker) lookup(c *client, m *ubus.Message) int {
	p, hasPath := m.String(ubus.AttrObjPath)
	var list []*object
	switch {
	case !hasPath:
		list = b.sortedObjects("")
	case p == "":
		return ubus.StatusInvalidArgument
	case strings.HasSuffix(p, "*"):
		list = b.sortedObjects(strings.TrimSuffix(p, "*"))
		if len(list) == 0 {
			return ubus.StatusNotFound
		}
	default:
		o := b.paths[p]
		if o == nil {
			return ubus.StatusNotFound
		}
		list = []*object{o}
	}
	for _, o := range list {
		if o.typeID == 0 {
			continue // ubusd describes only objects with a type
		}
		r := reply(ubus.MsgData, m)
		r.AddString(ubus.AttrObjPath, o.path)
		r.AddU32(ubus.AttrObjID, o.id)
		r.AddU32(ubus.AttrObjType, o.typeID)
		r.Add(ubus.AttrSignature, o.signature)
		b.send(c, r)
	}
	return ubus.StatusOK
}

func (b *Broker) sortedObjects(prefix string) []*object {
	var list []*object
	for p, o := range b.paths {
		if strings.HasPrefix(p, prefix) {
			list = append(list, o)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].path < list[j].path })
	return list
}

// forward builds the INVOKE ubusd sends to an object's owner.
func (b *Broker) forward(req *ubus.Message, seq uint16, peer uint32, to *object, method string, noReply bool) {
	f := &ubus.Message{Header: ubus.Header{Type: ubus.MsgInvoke, Seq: seq, Peer: peer}}
	if noReply {
		f.AddU8(ubus.AttrNoReply, 1)
	}
	f.AddU32(ubus.AttrObjID, to.id)
	f.AddString(ubus.AttrMethod, method)
	if b.User != "" {
		f.AddString(ubus.AttrUser, b.User)
	}
	if b.Group != "" {
		f.AddString(ubus.AttrGroup, b.Group)
	}
	if d, ok := req.Get(ubus.AttrData); ok {
		f.Add(ubus.AttrData, d)
	}
	b.send(to.client, f)
}

func (b *Broker) invoke(c *client, m *ubus.Message) int {
	method, id, ok := methodOf(m)
	if !ok {
		return ubus.StatusInvalidArgument
	}
	if id == eventObjectID {
		return b.eventCall(c, method, m)
	}
	o := b.objects[id]
	if o == nil {
		return ubus.StatusNotFound
	}
	b.forward(m, m.Seq, c.id, o, method, false)
	return -1
}

// response routes an object's DATA or STATUS to the caller named by the
// header's peer, with the object's id as the new peer.
func (b *Broker) response(c *client, m *ubus.Message) {
	id, err := u32(m, ubus.AttrObjID)
	if err != nil {
		return
	}
	if _, ok := m.U32(ubus.AttrStatus); m.Type == ubus.MsgStatus && !ok {
		return
	}
	if _, ok := m.Get(ubus.AttrData); m.Type == ubus.MsgData && !ok {
		return
	}
	o := b.objects[id]
	if o == nil || o.client != c {
		return
	}
	to := b.clients[m.Peer]
	if to == nil {
		return
	}
	r := *m
	r.Peer = id
	b.send(to, &r)
}

// subscriber finds the subscribing object of a (un)subscribe request,
// which must be the caller's own, and the target id; a status otherwise.
func (b *Broker) subscriber(c *client, m *ubus.Message) (*object, uint32, int) {
	id, err1 := u32(m, ubus.AttrObjID)
	tid, err2 := u32(m, ubus.AttrTarget)
	if err1 != nil || err2 != nil {
		return nil, 0, ubus.StatusInvalidArgument
	}
	o := b.objects[id]
	if o == nil {
		return nil, 0, ubus.StatusNotFound
	}
	if o.client != c {
		return nil, 0, ubus.StatusInvalidArgument
	}
	return o, tid, ubus.StatusOK
}

func (b *Broker) subscribe(c *client, m *ubus.Message) int {
	o, tid, st := b.subscriber(c, m)
	if st != ubus.StatusOK {
		return st
	}
	t := b.objects[tid]
	if t == nil {
		return ubus.StatusNotFound
	}
	if t.client == c {
		return ubus.StatusInvalidArgument
	}
	o.targets = append(o.targets, t)
	t.subscribers = append(t.subscribers, o)
	if len(t.subscribers) == 1 {
		b.subscriptionChanged(t)
	}
	return ubus.StatusOK
}

func (b *Broker) unsubscribe(c *client, m *ubus.Message) int {
	o, tid, st := b.subscriber(c, m)
	if st != ubus.StatusOK {
		return st
	}
	for _, t := range o.targets {
		if t.id == tid {
			b.unlink(o, t)
			return ubus.StatusOK
		}
	}
	return ubus.StatusNotFound
}

// unlink ends one subscription; the target hears when its last subscriber
// left.
func (b *Broker) unlink(sub, target *object) {
	sub.targets = without(sub.targets, target)
	target.subscribers = without(target.subscribers, sub)
	if len(target.subscribers) == 0 {
		b.subscriptionChanged(target)
	}
}

func without(list []*object, o *object) []*object {
	for i, x := range list {
		if x == o {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}

// subscriptionChanged sends the owner NOTIFY {OBJID, ACTIVE}.
func (b *Broker) subscriptionChanged(o *object) {
	o.invokeSeq++
	n := &ubus.Message{Header: ubus.Header{Type: ubus.MsgNotify, Seq: o.invokeSeq}}
	n.AddU32(ubus.AttrObjID, o.id)
	active := uint8(0)
	if len(o.subscribers) > 0 {
		active = 1
	}
	n.AddU8(ubus.AttrActive, active)
	b.send(o.client, n)
}

func (b *Broker) notify(c *client, m *ubus.Message) int {
	method, id, ok := methodOf(m)
	if !ok {
		return ubus.StatusInvalidArgument
	}
	noReply := false
	if v, ok := m.U8(ubus.AttrNoReply); ok {
		noReply = v != 0
	}
	o := b.objects[id]
	if o == nil {
		return ubus.StatusNotFound
	}
	if o.client != c {
		return ubus.StatusPermissionDenied
	}
	if !noReply {
		var ids []uint32
		for _, s := range o.subscribers {
			ids = append(ids, s.id)
		}
		r := reply(ubus.MsgStatus, m)
		r.AddU32(ubus.AttrObjID, o.id)
		r.Add(ubus.AttrSubscribers, ubus.EncodeIDList(ids))
		r.AddU32(ubus.AttrStatus, 0)
		b.send(c, r)
	}
	for _, s := range o.subscribers {
		b.forward(m, m.Seq, c.id, s, method, noReply)
	}
	return -1
}
