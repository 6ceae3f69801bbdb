package blocklist

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/mdlayher/netlink"
)

// timedElemMsg builds what the kernel multicasts for
//
//	nft add element ip crowdsec crowdsec-blacklists { 203.0.113.9 timeout 3s }
//
// in a set whose own timeout differs: NFTA_SET_ELEM_TIMEOUT 3000 and
// NFTA_SET_ELEM_EXPIRATION 2999 (ms left when the message was made), each
// a be64 the kernel puts after an NFTA_SET_ELEM_PAD where it aligns them.
func timedElemMsg(t *testing.T, timeoutMs, expiresMs uint64) []byte {
	t.Helper()
	be := func(v uint64) []byte { b := make([]byte, 8); binary.BigEndian.PutUint64(b, v); return b }
	key, _ := netlink.MarshalAttributes([]netlink.Attribute{{Type: attrDataValue, Data: []byte{203, 0, 113, 9}}})
	el, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: attrElemKey | netlink.Nested, Data: key},
		{Type: 8, Data: nil}, // NFTA_SET_ELEM_PAD
		{Type: attrElemTimeout, Data: be(timeoutMs)},
		{Type: attrElemExpiration, Data: be(expiresMs)},
	})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := netlink.MarshalAttributes([]netlink.Attribute{{Type: attrListElem | netlink.Nested, Data: el}})
	body, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: attrElemListTable, Data: []byte("crowdsec\x00")},
		{Type: attrElemListSet, Data: []byte("crowdsec-blacklists\x00")},
		{Type: attrElemListElems | netlink.Nested, Data: list},
	})
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte{2, 0, 0, 0}, body...) // NFPROTO_IPV4
}

func TestParseElemTimeoutAndExpiration(t *testing.T) {
	ev, err := parseSetEvent(nfnlSubsysNftables<<8|nftMsgNewSetElem, timedElemMsg(t, 3000, 2999))
	if err != nil || len(ev.Elems) != 1 {
		t.Fatalf("event %+v %v", ev, err)
	}
	el := ev.Elems[0]
	if el.Timeout != 3*time.Second || !el.HasExpires || el.Expires != 2999*time.Millisecond {
		t.Errorf("element %+v: want timeout 3s, expires 2.999s", el)
	}
	if life, ok := el.life(); !ok || life != 2999*time.Millisecond {
		t.Errorf("life %v %v, want the expiration", life, ok)
	}
	// A kernel that sends only the timeout: the element lives at most that.
	if life, ok := (rawElem{Timeout: time.Second}).life(); !ok || life != time.Second {
		t.Errorf("life of a timeout alone %v %v", life, ok)
	}
	if _, ok := (rawElem{Key: []byte{1, 2, 3, 4}}).life(); ok {
		t.Error("an element without timeout expires")
	}
	// A malformed length is ignored, not misread.
	ev, err = parseSetEvent(nfnlSubsysNftables<<8|nftMsgNewSetElem, newSetElemMsg(t, 2, "t", "s", []byte{1, 2, 3, 4}))
	if err != nil || ev.Elems[0].HasExpires || ev.Elems[0].Timeout != 0 {
		t.Errorf("an element without timeout parsed as %+v %v", ev.Elems, err)
	}
	if d := msDuration(^uint64(0)); d <= 0 {
		t.Errorf("msDuration overflowed: %v", d)
	}
}

func TestExpirySchedule(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var e expiry
	if !e.due().IsZero() {
		t.Error("no element, yet a read is due")
	}
	e.loaded([]rawElem{{Key: []byte{1, 2, 3, 4}}}, t0, t0.Add(5*time.Millisecond))
	if !e.due().IsZero() {
		t.Error("elements without timeout schedule a read")
	}
	e.note([]rawElem{{HasExpires: true, Expires: 3 * time.Second}}, t0.Add(time.Second))
	e.note([]rawElem{{HasExpires: true, Expires: 10 * time.Second}}, t0.Add(time.Second))
	if want := t0.Add(4*time.Second + expirySlack); !e.due().Equal(want) {
		t.Errorf("due %v, want the earliest expiry and the slack %v", e.due(), want)
	}
	// Just read (it took 200 ms), an expiry now: not before 20 × 200 ms.
	e.loaded([]rawElem{{HasExpires: true, Expires: 0}}, t0.Add(10*time.Second), t0.Add(10*time.Second+200*time.Millisecond))
	if want := t0.Add(10*time.Second + 200*time.Millisecond + 4*time.Second); !e.due().Equal(want) {
		t.Errorf("due %v, want %v: one read per 20 times its cost", e.due(), want)
	}
	// A cheap read: once a second at most.
	e.loaded([]rawElem{{HasExpires: true, Expires: 0}}, t0, t0.Add(time.Millisecond))
	if want := t0.Add(time.Millisecond + minReread); !e.due().Equal(want) {
		t.Errorf("due %v, want %v", e.due(), want)
	}
}

func TestBanIPBlockSet(t *testing.T) {
	for set, want := range map[string]bool{
		"blocklist.v4": true, "blocklist.v6": true, "cinsscore.v4": true, "country.de.v6": true, "asn.3320.v4": true,
		"allowlist.v4": false, "allowlist.v6": false, "allowlist.local.v4": false, "allowlist.v4MAC": false,
		"blocklist.v4MAC": false, ".v4": false, "blocklistv4": false, "hagezi": false,
	} {
		if got := banIPBlockSet(set); got != want {
			t.Errorf("banIPBlockSet(%q) = %v, want %v", set, got, want)
		}
	}
}
