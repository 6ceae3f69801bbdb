package cut

import (
	"bytes"
	"testing"
)

func TestKeyRoundTrip(t *testing.T) {
	cases := []struct {
		t    Tuple
		v6   bool
		want []byte
	}{
		// nft add element netdev fastpath_cut cut4 { 10.0.0.1 . 10.0.0.2 . udp . 5000 . 53 }
		{Tuple{Proto: "udp", Src: "10.0.0.1", Dst: "10.0.0.2", SrcPort: 5000, DstPort: 53}, false,
			[]byte{10, 0, 0, 1, 10, 0, 0, 2, 17, 0, 0, 0, 0x13, 0x88, 0, 0, 0, 53, 0, 0}},
	}
	for _, c := range cases {
		k, v6, err := Key(c.t)
		if err != nil || v6 != c.v6 || !bytes.Equal(k, c.want) {
			t.Errorf("Key(%v) = %v %v %v, want %v", c.t, k, v6, err, c.want)
		}
	}
	for _, tu := range []Tuple{
		{Proto: "tcp", Src: "fd00::1", Dst: "2001:db8::2", SrcPort: 1, DstPort: 65535},
		{Proto: "udp", Src: "192.0.2.1", Dst: "198.51.100.1", SrcPort: 40000, DstPort: 9000},
	} {
		k, v6, err := Key(tu)
		if err != nil {
			t.Fatal(err)
		}
		if want := tu.Src != "192.0.2.1"; v6 != want {
			t.Errorf("%v: v6 = %v", tu, v6)
		}
		back, err := DecodeKey(k)
		if err != nil || back != tu {
			t.Errorf("DecodeKey(Key(%v)) = %v, %v", tu, back, err)
		}
	}
	for _, bad := range []Tuple{
		{Proto: "icmp", Src: "10.0.0.1", Dst: "10.0.0.2"},
		{Proto: "tcp", Src: "10.0.0.1", Dst: "fd00::2"},
		{Proto: "tcp", Src: "nope", Dst: "10.0.0.2"},
	} {
		if _, _, err := Key(bad); err == nil {
			t.Errorf("Key(%v) accepted a bad tuple", bad)
		}
	}
	if _, err := DecodeKey(make([]byte, 7)); err == nil {
		t.Error("DecodeKey accepted 7 bytes")
	}
}

func TestReverse(t *testing.T) {
	tu := Tuple{Proto: "tcp", Src: "a", Dst: "b", SrcPort: 1, DstPort: 2}
	if r := tu.Reverse(); r.Src != "b" || r.Dst != "a" || r.SrcPort != 2 || r.DstPort != 1 || r.Reverse() != tu {
		t.Errorf("Reverse: %v", r)
	}
}
