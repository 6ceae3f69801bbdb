package ubustest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/ubus"
	"github.com/fastpath-wrt/fastpath/src/ubus/internal/vectors"
)

// idMap maps the ids ubusd chose in a recording to the ones the broker
// chose in the replay. ubusd picks client, object and type ids at random,
// so they are the only bytes that may differ.
type idMap map[uint32]uint32

func (ids idMap) learn(recorded, got uint32) error {
	if old, ok := ids[recorded]; ok && old != got {
		return fmt.Errorf("recorded id %08x maps to both %08x and %08x", recorded, old, got)
	}
	ids[recorded] = got
	return nil
}

// translate replaces every recorded id in b, at 4-byte aligned offsets
// (where the framing puts every id), with the broker's id.
func (ids idMap) translate(b []byte) []byte {
	out := append([]byte(nil), b...)
	for off := 4; off+4 <= len(out); off += 4 {
		v := binary.BigEndian.Uint32(out[off:])
		if n, ok := ids[v]; ok {
			binary.BigEndian.PutUint32(out[off:], n)
		}
	}
	return out
}

// TestReplayVectors plays the client side of every recorded scenario
// against the broker and compares each message the broker sends with the
// one ubusd sent, byte for byte once ids are mapped.
func TestReplayVectors(t *testing.T) {
	scenarios, err := vectors.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scenarios {
		t.Run(s.Name, func(t *testing.T) { replay(t, s) })
	}
}

func replay(t *testing.T, s vectors.Scenario) {
	b := Start(t)
	var err error

	last := map[string]int{} // each client's last recorded message
	for i, m := range s.Messages {
		last[m.Client] = i
	}
	conns := map[string]net.Conn{}
	ids := idMap{}
	for i, vm := range s.Messages {
		nc := conns[vm.Client]
		if vm.FromBroker() {
			if nc == nil {
				if vm.Type != "HELLO" {
					t.Fatalf("message %d: first message to %s is %s, want HELLO", i, vm.Client, vm.Type)
				}
				if nc, err = net.Dial("unix", b.Path()); err != nil {
					t.Fatal(err)
				}
				defer nc.Close()
				conns[vm.Client] = nc
			}
			nc.SetReadDeadline(time.Now().Add(2 * time.Second))
			got, err := ubus.ReadMessage(nc)
			if err != nil {
				t.Fatalf("message %d (%s to %s): %v", i, vm.Type, vm.Client, err)
			}
			rec, _ := ubus.DecodeMessage(vm.Bytes)
			learnIDs(t, ids, rec, got)
			gotBytes, _ := got.Encode()
			if want := ids.translate(vm.Bytes); !bytes.Equal(gotBytes, want) {
				t.Fatalf("message %d (%s to %s):\nbroker sent %x\nubusd sent  %x", i, vm.Type, vm.Client, gotBytes, want)
			}
		} else {
			if nc == nil {
				t.Fatalf("message %d: %s sends before its HELLO", i, vm.Client)
			}
			if _, err := nc.Write(ids.translate(vm.Bytes)); err != nil {
				t.Fatal(err)
			}
		}
		if last[vm.Client] == i && !vm.FromBroker() {
			// The client's own last word: it exits, and the broker must
			// react as ubusd did (e.g. tell the owner its subscriber left).
			nc.Close()
		}
	}
}

// learnIDs maps the random ids in a broker message to the recorded ones:
// the client id in HELLO and the ids ADD_OBJECT answers carry.
func learnIDs(t *testing.T, ids idMap, rec, got *ubus.Message) {
	t.Helper()
	var err error
	if rec.Type == ubus.MsgHello {
		err = ids.learn(rec.Peer, got.Peer)
	}
	if rec.Type == ubus.MsgData {
		for _, a := range []ubus.AttrID{ubus.AttrObjID, ubus.AttrObjType} {
			r, ok1 := rec.U32(a)
			g, ok2 := got.U32(a)
			if ok1 && ok2 && r != g {
				if _, known := ids[r]; !known && r >= systemObjectMax {
					err = ids.learn(r, g)
				}
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}
