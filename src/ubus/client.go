package ubus

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fastpath-wrt/fastpath/src/logger"
)

// Client keeps a connection to ubusd alive: it dials, registers its
// objects, listeners and subscriptions, and when ubusd goes away (a
// restart, a malformed frame) it dials again with backoff and registers
// them all again. Its methods never wait for a connection: when there is
// none they fail at once with StatusConnectionFailed.
type Client struct {
	path string
	log  *logger.Entry
	// MinBackoff and MaxBackoff bound the wait between dial attempts.
	MinBackoff, MaxBackoff time.Duration

	regMu     sync.Mutex // one registration at a time: no object added mid-reconnect is missed
	mu        sync.Mutex
	conn      *Conn
	objects   []*Object
	listeners []listenSpec
	subs      []subscribeSpec
	up        chan struct{} // closed while connected and registered
	stop      chan struct{}
	stopped   chan struct{}
	started   sync.Once
}

type listenSpec struct {
	pattern string
	h       EventHandler
}

type subscribeSpec struct {
	path string
	h    NotifyHandler
}

// NewClient prepares a client for the socket at path ("" for the default
// paths). Register objects and listeners, then call Start.
func NewClient(path string, log *logger.Entry) *Client {
	if log == nil {
		log = logger.Default()
	}
	return &Client{
		path: path, log: log,
		MinBackoff: 100 * time.Millisecond, MaxBackoff: 5 * time.Second,
		up:      make(chan struct{}),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
}

// Start begins connecting in the background.
func (c *Client) Start() {
	c.started.Do(func() { go c.run() })
}

// Close stops reconnecting and closes the connection.
func (c *Client) Close() error {
	c.Start() // so stopped is closed by run
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.stopped
	return nil
}

// Ready is closed while the client is connected with everything
// registered; after a disconnect a new channel is handed out.
func (c *Client) Ready() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.up
}

// WaitReady waits until the client is connected or ctx ends.
func (c *Client) WaitReady(ctx context.Context) error {
	select {
	case <-c.Ready():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for ubusd at %s: %w", c.describePath(), ctx.Err())
	}
}

func (c *Client) describePath() string {
	if c.path == "" {
		return DefaultSocket + " or " + LegacySocket
	}
	return c.path
}

// Conn is the current connection, or nil while there is none.
func (c *Client) Conn() *Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn
}

func (c *Client) current() (*Conn, error) {
	if conn := c.Conn(); conn != nil {
		return conn, nil
	}
	return nil, &StatusError{Code: StatusConnectionFailed, Message: "not connected to ubusd at " + c.describePath() + " (reconnecting)"}
}

// AddObject registers obj now (when connected) and after every reconnect.
func (c *Client) AddObject(obj *Object) error {
	return c.register(func() { c.objects = append(c.objects, obj) }, func(conn *Conn) error {
		return conn.AddObject(context.Background(), obj)
	})
}

// register records a registration for every reconnect to replay (remember
// runs under c.mu) and makes it now on the current connection, if any.
func (c *Client) register(remember func(), now func(*Conn) error) error {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	c.mu.Lock()
	remember()
	conn := c.conn
	c.mu.Unlock()
	if conn == nil {
		return nil
	}
	return now(conn)
}

// RemoveObject unregisters obj and stops registering it after reconnects.
func (c *Client) RemoveObject(obj *Object) error {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	c.mu.Lock()
	for i, o := range c.objects {
		if o == obj {
			c.objects = append(c.objects[:i:i], c.objects[i+1:]...)
			break
		}
	}
	conn := c.conn
	c.mu.Unlock()
	if conn == nil || obj.ID() == 0 {
		return nil
	}
	return conn.RemoveObject(context.Background(), obj)
}

// Listen registers an event listener now (when connected) and after every
// reconnect.
func (c *Client) Listen(pattern string, h EventHandler) error {
	return c.register(func() { c.listeners = append(c.listeners, listenSpec{pattern, h}) }, func(conn *Conn) error {
		return conn.Listen(context.Background(), pattern, h)
	})
}

// Subscribe subscribes to an object now (when connected and the object
// exists) and after every reconnect.
func (c *Client) Subscribe(path string, h NotifyHandler) error {
	return c.register(func() { c.subs = append(c.subs, subscribeSpec{path, h}) }, func(conn *Conn) error {
		return conn.Subscribe(context.Background(), path, h, nil)
	})
}

// Call calls object.method on the current connection.
func (c *Client) Call(ctx context.Context, object, method string, args any) (Table, error) {
	conn, err := c.current()
	if err != nil {
		return nil, err
	}
	return conn.Call(ctx, object, method, args)
}

// SendEvent sends an event on the current connection.
func (c *Client) SendEvent(ctx context.Context, id string, data any) error {
	conn, err := c.current()
	if err != nil {
		return err
	}
	return conn.SendEvent(ctx, id, data)
}

// Notify notifies obj's subscribers on the current connection.
func (c *Client) Notify(ctx context.Context, obj *Object, typ string, data any) (int, error) {
	conn, err := c.current()
	if err != nil {
		return 0, err
	}
	return conn.Notify(ctx, obj, typ, data)
}

func (c *Client) run() {
	defer close(c.stopped)
	backoff := c.MinBackoff
	failing := false
	for {
		conn, err := c.connect()
		if err != nil {
			if !failing {
				c.log.WithError(err).Warn("ubus: not connected; retrying in the background")
				failing = true
			}
			select {
			case <-c.stop:
				return
			case <-time.After(backoff):
			}
			if backoff *= 2; backoff > c.MaxBackoff {
				backoff = c.MaxBackoff
			}
			continue
		}
		if failing {
			c.log.WithField("client_id", fmt.Sprintf("%08x", conn.ID())).Info("ubus: connected")
		}
		failing, backoff = false, c.MinBackoff
		select {
		case <-c.stop:
			c.drop(conn)
			return
		case <-conn.Done():
			c.log.WithError(conn.Err()).Warn("ubus: connection lost; reconnecting")
			c.drop(conn)
		}
	}
}

// connect dials and registers everything; any failure closes the new
// connection so the next attempt starts clean.
func (c *Client) connect() (*Conn, error) {
	conn, err := DialLog(c.path, c.log)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.regMu.Lock()
	defer c.regMu.Unlock()
	c.mu.Lock()
	objects := append([]*Object(nil), c.objects...)
	listeners := append([]listenSpec(nil), c.listeners...)
	subs := append([]subscribeSpec(nil), c.subs...)
	c.mu.Unlock()
	for _, o := range objects {
		if err := conn.AddObject(ctx, o); err != nil {
			conn.Close()
			return nil, err
		}
	}
	for _, l := range listeners {
		if err := conn.Listen(ctx, l.pattern, l.h); err != nil {
			conn.Close()
			return nil, err
		}
	}
	for _, s := range subs {
		// The target may not be there yet; a missing one is not fatal.
		if err := conn.Subscribe(ctx, s.path, s.h, nil); err != nil {
			c.log.WithError(err).Debug("ubus: subscription not made")
		}
	}
	c.mu.Lock()
	c.conn = conn
	close(c.up)
	c.mu.Unlock()
	return conn, nil
}

func (c *Client) drop(conn *Conn) {
	conn.Close()
	c.mu.Lock()
	c.conn = nil
	c.up = make(chan struct{})
	c.mu.Unlock()
}
