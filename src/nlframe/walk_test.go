package nlframe

import (
	"encoding/binary"
	"errors"
	"syscall"
	"testing"
)

// msg frames one netlink message, padded to four bytes as the kernel
// puts them in a read.
func msg(typ uint16, seq uint32, body []byte) []byte {
	n := hdrLen + len(body)
	b := make([]byte, (n+3)&^3)
	binary.NativeEndian.PutUint32(b[0:4], uint32(n))
	binary.NativeEndian.PutUint16(b[4:6], typ)
	binary.NativeEndian.PutUint32(b[8:12], seq)
	copy(b[hdrLen:], body)
	return b
}

func errBody(code int32) []byte {
	b := make([]byte, 4)
	binary.NativeEndian.PutUint32(b, uint32(code))
	return b
}

func TestWalk(t *testing.T) {
	var got []string
	collect := func(typ uint16, body []byte) error {
		got = append(got, string(rune('0'+typ))+string(body))
		return nil
	}
	cat := func(ms ...[]byte) (b []byte) {
		for _, m := range ms {
			b = append(b, m...)
		}
		return b
	}
	// Parts of seq 7, a late answer to seq 6 between them, a no-op: the
	// walk sees seq 7's entries and does not end.
	done, err := Walk(cat(msg(5, 7, []byte("a")), msg(5, 6, []byte("late")), msg(msgNoop, 7, nil), msg(5, 7, []byte("bcdef"))), 7, collect)
	if done || err != nil || len(got) != 2 || got[0] != "5a" || got[1] != "5bcdef" {
		t.Fatalf("parts: done %v, err %v, got %q", done, err, got)
	}
	got = nil
	if done, err := Walk(cat(msg(5, 7, []byte("x")), msg(msgDone, 7, errBody(0)), msg(5, 7, []byte("after"))), 7, collect); !done || err != nil || len(got) != 1 {
		t.Errorf("NLMSG_DONE: done %v, err %v, got %q", done, err, got)
	}
	if done, err := Walk(msg(msgError, 7, errBody(0)), 7, collect); !done || err != nil {
		t.Errorf("acknowledgement: done %v, err %v", done, err)
	}
	if _, err := Walk(msg(msgError, 7, errBody(-int32(syscall.ENOENT))), 7, collect); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("error answer: %v, want ENOENT", err)
	}
	if _, err := Walk(msg(msgError, 7, nil), 7, collect); err == nil {
		t.Error("a short error message was accepted")
	}
	bad := msg(5, 7, []byte("abc"))
	binary.NativeEndian.PutUint32(bad[0:4], 200)
	if _, err := Walk(bad, 7, collect); err == nil {
		t.Error("a message longer than the read was accepted")
	}
	stop := errors.New("stop")
	n := 0
	if _, err := Walk(cat(msg(5, 7, nil), msg(5, 7, nil)), 7, func(uint16, []byte) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("fn's error: %v after %d calls, want stop after 1", err, n)
	}
}

func FuzzWalk(f *testing.F) {
	f.Add(msg(5, 7, []byte("abc")), uint32(7))
	f.Add(append(msg(5, 7, nil), msg(msgDone, 7, nil)...), uint32(7))
	f.Fuzz(func(t *testing.T, b []byte, seq uint32) {
		_, _ = Walk(b, seq, func(uint16, []byte) error { return nil })
	})
}
