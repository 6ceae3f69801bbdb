package ubus

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/logger"
)

// A malformed frame closes that connection with a log line; pending calls
// fail instead of hanging, and nothing panics.
func TestMalformedFrameClosesConnection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ubus.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		nc.Write(mustHex("00000000 12345678 00000004")) // HELLO
		buf := make([]byte, 64)
		nc.Read(buf) // the LOOKUP
		// STATUS whose attribute claims the blobmsg flag: not a ubus attribute.
		nc.Write(mustHex("00010001 00000000 0000000c 81000008 00000000"))
		// Keep the connection open until the client ends it: the failure
		// must come from the malformed frame, not from this side closing.
		io.Copy(io.Discard, nc)
	}()
	var logged syncBuffer
	log := logger.New()
	log.SetOutput(&logged)
	c, err := DialLog(path, logger.NewEntry(log))
	if err != nil {
		t.Fatal(err)
	}
	if c.ID() != 0x12345678 {
		t.Errorf("client id %08x, want the HELLO's peer 12345678", c.ID())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = c.Lookup(ctx, "demo")
	if !errors.Is(err, &StatusError{Code: StatusConnectionFailed}) {
		t.Fatalf("lookup over a broken connection: %v, want a connection failure", err)
	}
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("connection still open after a malformed frame")
	}
	if line := logged.String(); !strings.Contains(line, "level=warning") || !strings.Contains(line, "malformed frame") {
		t.Fatalf("log %q, want a warning about the malformed frame", line)
	}
}

func TestDialNamesMissingSocket(t *testing.T) {
	_, err := Dial(filepath.Join(t.TempDir(), "nosuch.sock"))
	if err == nil || !strings.Contains(err.Error(), "is ubusd running?") {
		t.Fatalf("error %v, want one naming the socket and ubusd", err)
	}
}

// syncBuffer is a bytes.Buffer the connection's reader may write while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
