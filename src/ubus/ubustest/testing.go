package ubustest

import (
	"path/filepath"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/ubus"
)

// Start is a broker on a socket in t's temporary directory, closed when
// the test ends.
func Start(t testing.TB) *Broker {
	t.Helper()
	b, err := Listen(filepath.Join(t.TempDir(), "ubus.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// Dial is a connection to b, closed when the test ends.
func (b *Broker) Dial(t testing.TB) *ubus.Conn {
	t.Helper()
	c, err := ubus.Dial(b.Path())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
