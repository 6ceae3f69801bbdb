package ubus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/fastpath-wrt/fastpath/src/logger"
)

// Socket paths ubusd listens on: OpenWrt 21.02 and later, then older ones.
const (
	DefaultSocket = "/var/run/ubus/ubus.sock"
	LegacySocket  = "/var/run/ubus.sock"
)

// DefaultTimeout bounds a request whose context has no deadline, as the
// ubus CLI's default of 30 s does.
const DefaultTimeout = 30 * time.Second

// writeTimeout keeps a stuck ubusd from blocking a writer forever.
const writeTimeout = 10 * time.Second

// MaxCallsInFlight bounds the method calls of named objects one
// connection runs at once. A call beyond it is answered at once with
// StatusBusy and a text saying so, so a flood of pipelined calls costs
// neither goroutines nor memory beyond the bound.
const MaxCallsInFlight = 32

// StatusBusy answers a call refused because MaxCallsInFlight calls are
// running: libubus has no busy code, and NO_MEMORY ("Out of memory") is
// what ubusd itself answers when it cannot take more.
const StatusBusy = StatusNoMemory

// maxBusyAnswers bounds the refusals waiting to be written (16 bytes
// each); beyond it a refused call gets no answer and its caller times out.
const maxBusyAnswers = 1 << 16

// ErrClosed is returned for requests on a closed connection.
var ErrClosed = errors.New("ubus connection closed")

// Conn is one connection to ubusd. Its methods are safe for concurrent use;
// a reader goroutine routes answers to their requests and runs object
// handlers in their own goroutines.
type Conn struct {
	nc  net.Conn
	id  uint32
	log *logger.Entry

	wmu sync.Mutex // serialises whole frames on the socket

	mu       sync.Mutex
	seq      uint16
	pending  map[reqKey]*request
	bindings map[uint32]*binding
	err      error

	inflight chan struct{} // one token per method call running
	busy     busyQueue     // refusals, written by their own goroutine

	done     chan struct{}
	ctx      context.Context // cancelled when the connection closes; handlers get it
	cancel   context.CancelFunc
	closeMux sync.Once
}

// reqKey matches answers to requests as libubus does: by seq and peer.
type reqKey struct {
	seq  uint16
	peer uint32
}

type request struct {
	bind   *binding // ADD_OBJECT: bound as the answer arrives, before any INVOKE for it
	ping   bool     // PING: ubusd's DATA echo completes it; no STATUS follows
	data   []*Message
	status int
	final  *Message // the STATUS message
	done   chan struct{}
}

// Dial connects to ubusd at path; an empty path tries DefaultSocket, then
// LegacySocket. It waits for ubusd's HELLO, which carries the client id.
func Dial(path string) (*Conn, error) {
	return DialLog(path, logger.Default())
}

// DialLog is Dial with a logger for connection-level problems.
func DialLog(path string, log *logger.Entry) (*Conn, error) {
	paths := []string{path}
	if path == "" {
		paths = []string{DefaultSocket, LegacySocket}
	}
	var firstErr error
	for _, p := range paths {
		// DialUnix, not Dial: a unix socket connects at once, and Dial
		// would link the whole DNS resolver into the router's binary.
		nc, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: p, Net: "unix"})
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		c, err := newConn(nc, log)
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("ubus socket %s: %w", p, err)
		}
		return c, nil
	}
	if errors.Is(firstErr, os.ErrNotExist) {
		return nil, fmt.Errorf("ubus socket %v not found: is ubusd running? (%w)", paths, firstErr)
	}
	return nil, fmt.Errorf("connecting to ubus socket %v: %w", paths, firstErr)
}

func newConn(nc net.Conn, log *logger.Entry) (*Conn, error) {
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	hello, err := ReadMessage(nc)
	if err != nil {
		return nil, fmt.Errorf("waiting for ubusd's HELLO: %w", err)
	}
	if hello.Type != MsgHello {
		return nil, fmt.Errorf("ubusd sent %s first, want HELLO", hello.Type)
	}
	nc.SetReadDeadline(time.Time{})
	c := &Conn{
		nc:       nc,
		id:       hello.Peer,
		log:      log,
		pending:  map[reqKey]*request{},
		bindings: map[uint32]*binding{},
		inflight: make(chan struct{}, MaxCallsInFlight),
		done:     make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.busy.cond = sync.NewCond(&c.busy.mu)
	go c.readLoop()
	go c.busyLoop()
	return c, nil
}

// ID is the client id ubusd gave this connection.
func (c *Conn) ID() uint32 { return c.id }

// Done is closed when the connection is closed, by either side.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err tells why the connection closed; nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection; pending requests fail with ErrClosed.
func (c *Conn) Close() error {
	c.shutdown(ErrClosed)
	return nil
}

func (c *Conn) shutdown(err error) {
	c.closeMux.Do(func() {
		c.mu.Lock()
		c.err = err
		pending := c.pending
		c.pending = map[reqKey]*request{}
		bindings := c.bindings
		c.bindings = map[uint32]*binding{}
		c.mu.Unlock()
		c.nc.Close()
		c.cancel()
		c.busy.close()
		for _, r := range pending {
			r.status = StatusConnectionFailed
			close(r.done)
		}
		for _, b := range bindings {
			b.unbind(c)
		}
		close(c.done)
	})
}

func (c *Conn) readLoop() {
	for {
		m, err := ReadMessage(c.nc)
		if err != nil {
			select {
			case <-c.done:
				return
			default:
			}
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
				c.shutdown(fmt.Errorf("ubusd closed the connection: %w", ErrClosed))
				return
			}
			c.log.WithError(err).Warn("ubus: closing the connection after a malformed frame")
			c.shutdown(fmt.Errorf("malformed frame from ubusd: %w", err))
			return
		}
		c.dispatch(m)
	}
}

func (c *Conn) dispatch(m *Message) {
	switch m.Type {
	case MsgData, MsgStatus:
		c.answer(m)
	case MsgInvoke:
		id, _ := m.U32(AttrObjID)
		c.mu.Lock()
		b := c.bindings[id]
		c.mu.Unlock()
		if b != nil && b.obj == nil {
			b.enqueue(c, id, m)
			return
		}
		select {
		case c.inflight <- struct{}{}:
			go func() {
				defer func() { <-c.inflight }()
				c.serveInvoke(b, id, m)
			}()
		default:
			if nr, _ := m.U8(AttrNoReply); nr == 0 {
				c.busy.push(busyCall{id: id, seq: m.Seq, peer: m.Peer})
			}
		}
	case MsgNotify:
		// ubusd tells an object's owner whether it has subscribers.
		id, _ := m.U32(AttrObjID)
		active, _ := m.U8(AttrActive)
		if b := c.binding(id); b != nil {
			b.setActive(active != 0)
		}
	case MsgUnsubscribe:
		// ubusd tells a subscriber that its target went away.
		id, _ := m.U32(AttrObjID)
		target, _ := m.U32(AttrTarget)
		if b := c.binding(id); b != nil && b.onRemove != nil {
			go b.onRemove(target)
		}
	default:
		c.log.WithField("type", m.Type.String()).Debug("ubus: ignoring unexpected message")
	}
}

func (c *Conn) binding(id uint32) *binding {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bindings[id]
}

func (c *Conn) answer(m *Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := reqKey{m.Seq, m.Peer}
	r := c.pending[k]
	if r == nil {
		return // late answer (timed out request, a subscriber's reply to a notify)
	}
	if m.Type == MsgData {
		if id, ok := m.U32(AttrObjID); ok && r.bind != nil {
			c.bindings[id] = r.bind
		}
		r.data = append(r.data, m)
		if !r.ping {
			return
		}
	}
	st, ok := m.U32(AttrStatus)
	if !ok && !r.ping {
		st = StatusUnknownError
	}
	r.status = int(int32(st))
	r.final = m
	delete(c.pending, k)
	close(r.done)
}

// send writes one message; it is refused when larger than MaxMessageLen.
func (c *Conn) send(m *Message) error {
	b, err := m.Encode()
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	c.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := c.nc.Write(b); err != nil {
		c.shutdown(fmt.Errorf("writing to ubusd: %w", err))
		return fmt.Errorf("writing %s to ubusd: %w", m.Type, err)
	}
	return nil
}

// request sends m with the next seq and waits for its STATUS, returning the
// DATA messages that came before it.
func (c *Conn) request(ctx context.Context, m *Message) ([]*Message, int, error) {
	return c.requestBind(ctx, m, nil)
}

func (c *Conn) requestBind(ctx context.Context, m *Message, bind *binding) ([]*Message, int, error) {
	r, err := c.do(ctx, m, &request{bind: bind})
	if err != nil {
		return nil, 0, err
	}
	return r.data, r.status, nil
}

// do sends m and waits for the STATUS that completes it.
func (c *Conn) do(ctx context.Context, m *Message, r *request) (*request, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	r.done = make(chan struct{})
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.seq++
	m.Seq = c.seq
	k := reqKey{m.Seq, m.Peer}
	c.pending[k] = r
	c.mu.Unlock()

	if err := c.send(m); err != nil {
		c.forget(k)
		return nil, err
	}
	select {
	case <-r.done:
		if r.final == nil && c.Err() != nil {
			return nil, &StatusError{Code: StatusConnectionFailed, Message: c.Err().Error()}
		}
		return r, nil
	case <-ctx.Done():
		c.forget(k)
		return nil, &StatusError{Code: StatusTimeout, Message: fmt.Sprintf("%s: %v", m.Type, ctx.Err())}
	}
}

func (c *Conn) forget(k reqKey) {
	c.mu.Lock()
	delete(c.pending, k)
	c.mu.Unlock()
}

// Ping checks that ubusd answers: it echoes a PING as DATA.
func (c *Conn) Ping(ctx context.Context) error {
	_, err := c.do(ctx, &Message{Header: Header{Type: MsgPing}}, &request{ping: true})
	return err
}
