//go:build linux

package conntrack

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// entryMessage encodes a conntrack entry as the kernel sends it in a dump:
// netlink header, nfgenmsg, then the entry's attributes, among them some
// the lean parser skips (counters, timeout, protocol state).
func entryMessage(t testing.TB, seq uint32, proto uint8, orig, reply [2]netip.Addr, ports [4]uint16, st, id uint32) []byte {
	t.Helper()
	ae := netlink.NewAttributeEncoder()
	ae.ByteOrder = binary.BigEndian
	tuple := func(typ uint16, a [2]netip.Addr, sport, dport uint16) {
		ae.Nested(typ, func(ae *netlink.AttributeEncoder) error {
			ae.Nested(ctaTupleIP, func(ae *netlink.AttributeEncoder) error {
				src, dst := uint16(ctaIPv4Src), uint16(ctaIPv4Dst)
				if a[0].Is6() {
					src, dst = ctaIPv6Src, ctaIPv6Dst
				}
				ae.Bytes(src, a[0].AsSlice())
				ae.Bytes(dst, a[1].AsSlice())
				return nil
			})
			ae.Nested(ctaTupleProto, func(ae *netlink.AttributeEncoder) error {
				ae.Uint8(ctaProtoNum, proto)
				if proto == 1 || proto == 58 {
					ae.Uint16(4, 77) // CTA_PROTO_ICMP_ID: not a port
					return nil
				}
				ae.Uint16(ctaProtoSrcPort, sport)
				ae.Uint16(ctaProtoDstPort, dport)
				return nil
			})
			ae.Uint16(3, 0) // CTA_TUPLE_ZONE
			return nil
		})
	}
	tuple(ctaTupleOrig, orig, ports[0], ports[1])
	tuple(ctaTupleReply, reply, ports[2], ports[3])
	ae.Uint32(ctaStatus, st)
	ae.Uint32(7, 120)                                       // CTA_TIMEOUT
	ae.Nested(9, func(ae *netlink.AttributeEncoder) error { // CTA_COUNTERS_ORIG
		ae.Uint64(1, 10)
		ae.Uint64(2, 1000)
		return nil
	})
	ae.Uint32(ctaID, id)
	ae.Uint32(ctaMark, 0x42)
	ae.Nested(ctaProtoInfo, func(ae *netlink.AttributeEncoder) error {
		ae.Nested(ctaProtoInfoTCP, func(ae *netlink.AttributeEncoder) error {
			ae.Uint8(ctaProtoInfoTCPState, 3)
			return nil
		})
		return nil
	})
	attrs, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	family := byte(unix.AF_INET)
	if orig[0].Is6() {
		family = unix.AF_INET6
	}
	body := append([]byte{family, 0, 0, 0}, attrs...)
	return netlinkMessage(nfnlSubsysCTNetlink<<8, seq, body)
}

func netlinkMessage(typ uint16, seq uint32, body []byte) []byte {
	msg := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(body)+3)
	binary.NativeEndian.PutUint32(msg[0:4], uint32(unix.NLMSG_HDRLEN+len(body)))
	binary.NativeEndian.PutUint16(msg[4:6], typ)
	binary.NativeEndian.PutUint32(msg[8:12], seq)
	msg = append(msg, body...)
	for len(msg)%4 != 0 {
		msg = append(msg, 0)
	}
	return msg
}

func addrs(a, b string) [2]netip.Addr {
	return [2]netip.Addr{netip.MustParseAddr(a), netip.MustParseAddr(b)}
}

// sampleRead is one read of a dump: a masqueraded IPv4 TCP entry, an IPv6
// UDP one, an ICMP one, an entry of another request, and NLMSG_DONE.
func sampleRead(t testing.TB) []byte {
	var b []byte
	b = append(b, entryMessage(t, 5, 6, addrs("10.0.0.2", "198.51.100.7"), addrs("198.51.100.7", "192.0.2.1"), [4]uint16{40000, 443, 443, 61000}, 1<<14|1<<15|statusAssured, 99)...)
	b = append(b, entryMessage(t, 5, 17, addrs("fd00::2", "2001:db8::1"), addrs("2001:db8::1", "fd00::2"), [4]uint16{5353, 53, 53, 5353}, 0, 100)...)
	b = append(b, entryMessage(t, 5, 1, addrs("10.0.0.2", "198.51.100.7"), addrs("198.51.100.7", "10.0.0.2"), [4]uint16{}, statusAssured, 101)...)
	b = append(b, entryMessage(t, 4, 17, addrs("10.0.0.9", "10.0.0.8"), addrs("10.0.0.8", "10.0.0.9"), [4]uint16{1, 2, 2, 1}, 0, 102)...)
	b = append(b, netlinkMessage(unix.NLMSG_DONE, 5, []byte{0, 0, 0, 0})...)
	return b
}

// eachEntry is EachTuple over one read of a dump.
func eachEntry(buf []byte, seq uint32, d *TupleDump, fn func(netstate.Flow)) (bool, error) {
	visit := tupleVisitor(d, func(f netstate.Flow) bool { fn(f); return true })
	return eachMessage(buf, seq, d, func(family uint8, attrs []byte) { visit(family, attrs) })
}

func TestEachEntry(t *testing.T) {
	var got []netstate.Flow
	var d TupleDump
	done, err := eachEntry(sampleRead(t), 5, &d, func(f netstate.Flow) { got = append(got, f) })
	if err != nil || !done {
		t.Fatalf("eachEntry: done %v, %v", done, err)
	}
	want := []netstate.Flow{
		{ID: 99, Family: "ipv4", Proto: "tcp", Offload: OffloadHardware, Assured: true,
			Original: netstate.Tuple{Proto: "tcp", Src: "10.0.0.2", Dst: "198.51.100.7", SrcPort: 40000, DstPort: 443},
			Reply:    netstate.Tuple{Proto: "tcp", Src: "198.51.100.7", Dst: "192.0.2.1", SrcPort: 443, DstPort: 61000}},
		{ID: 100, Family: "ipv6", Proto: "udp",
			Original: netstate.Tuple{Proto: "udp", Src: "fd00::2", Dst: "2001:db8::1", SrcPort: 5353, DstPort: 53},
			Reply:    netstate.Tuple{Proto: "udp", Src: "2001:db8::1", Dst: "fd00::2", SrcPort: 53, DstPort: 5353}},
		{ID: 101, Family: "ipv4", Proto: "icmp", Assured: true,
			Original: netstate.Tuple{Proto: "icmp", Src: "10.0.0.2", Dst: "198.51.100.7"},
			Reply:    netstate.Tuple{Proto: "icmp", Src: "198.51.100.7", Dst: "10.0.0.2"}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if d.Entries != 3 || d.Skipped != 0 {
		t.Errorf("report %+v, want 3 entries, none skipped", d)
	}
}

// TestEachEntrySkipsMalformed: an entry whose tuple is cut short is
// counted and skipped; the entries around it are still read.
func TestEachEntrySkipsMalformed(t *testing.T) {
	bad := entryMessage(t, 5, 17, addrs("10.0.0.2", "10.0.0.3"), addrs("10.0.0.3", "10.0.0.2"), [4]uint16{1, 2, 2, 1}, 0, 7)
	// Shrink the original tuple's address attribute from 8 to 6 bytes: a
	// 2-byte IPv4 address.
	off := unix.NLMSG_HDRLEN + 4 + 4 + 4 // header, nfgenmsg, CTA_TUPLE_ORIG, CTA_TUPLE_IP
	if binary.NativeEndian.Uint16(bad[off:]) != 8 {
		t.Fatalf("test message layout changed: %x", bad[:off+8])
	}
	binary.NativeEndian.PutUint16(bad[off:], 6)
	read := append(bad, sampleRead(t)...)
	var d TupleDump
	n := 0
	done, err := eachEntry(read, 5, &d, func(netstate.Flow) { n++ })
	if err != nil || !done || n != 3 {
		t.Fatalf("done %v, %v, %d entries; want done, nil, 3", done, err, n)
	}
	if d.Entries != 4 || d.Skipped != 1 || d.FirstSkip == nil {
		t.Errorf("report %+v, want 4 entries, 1 skipped with its reason", d)
	}
}

func TestEachEntryKernelError(t *testing.T) {
	body := make([]byte, 4+unix.NLMSG_HDRLEN)
	code := -int32(unix.EPERM)
	binary.NativeEndian.PutUint32(body, uint32(code))
	var d TupleDump
	_, err := eachEntry(netlinkMessage(unix.NLMSG_ERROR, 5, body), 5, &d, func(netstate.Flow) {})
	if err != unix.EPERM {
		t.Errorf("error %v, want EPERM", err)
	}
}

// FuzzEachEntry: whatever the bytes, parsing neither panics nor reports
// an entry whose tuples a cut could not use.
func FuzzEachEntry(f *testing.F) {
	f.Add(sampleRead(f))
	f.Add(entryMessage(f, 5, 58, addrs("fd00::2", "2001:db8::1"), addrs("2001:db8::1", "fd00::2"), [4]uint16{}, 0, 1))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d TupleDump
		_, _ = eachMessage(b, 5, &d, func(_ uint8, attrs []byte) {
			if f, err := parseEntry(attrs, true); err == nil {
				mapFlow(f)
			}
		})
		d = TupleDump{}
		_, _ = eachEntry(b, 5, &d, func(fl netstate.Flow) {
			for _, tu := range []netstate.Tuple{fl.Original, fl.Reply} {
				src, err1 := netip.ParseAddr(tu.Src)
				dst, err2 := netip.ParseAddr(tu.Dst)
				if err1 != nil || err2 != nil || src.Is4() != dst.Is4() || tu.Proto == "" {
					t.Fatalf("unusable tuple %+v reported", tu)
				}
			}
		})
		if d.Skipped > d.Entries || (d.Skipped > 0) != (d.FirstSkip != nil) {
			t.Fatalf("inconsistent report %+v", d)
		}
	})
}

// TestParseEntryFull: a full read adds timeout, mark, counters and TCP
// state to what the lean read gives, which leaves them zero.
func TestParseEntryFull(t *testing.T) {
	msg := entryMessage(t, 5, 6, addrs("10.0.0.2", "198.51.100.7"), addrs("198.51.100.7", "192.0.2.1"), [4]uint16{40000, 443, 443, 61000}, statusAssured, 99)
	attrs := msg[unix.NLMSG_HDRLEN+4:]
	lean, err := parseEntry(attrs, false)
	if err != nil {
		t.Fatal(err)
	}
	if lean.Timeout != 0 || lean.CountersOrig.Packets != 0 || lean.ProtoInfo.TCP != nil {
		t.Errorf("lean read decoded more than tuples, status and id: %+v", lean)
	}
	full, err := parseEntry(attrs, true)
	if err != nil {
		t.Fatal(err)
	}
	got := mapFlow(full)
	want := netstate.Flow{ID: 99, Family: "ipv4", Proto: "tcp", State: "ESTABLISHED", Assured: true,
		Original: netstate.Tuple{Proto: "tcp", Src: "10.0.0.2", Dst: "198.51.100.7", SrcPort: 40000, DstPort: 443},
		Reply:    netstate.Tuple{Proto: "tcp", Src: "198.51.100.7", Dst: "192.0.2.1", SrcPort: 443, DstPort: 61000},
		Packets:  10, Bytes: 1000, Timeout: 120, Mark: 0x42}
	if got != want {
		t.Errorf("full read:\n got %+v\nwant %+v", got, want)
	}
}

// TestDumpQueryMessage: the request bytes of a filtered dump, as the
// kernel reads them (CTA_STATUS and CTA_STATUS_MASK big-endian, the
// CTA_FILTER flags in host order).
func TestDumpQueryMessage(t *testing.T) {
	// conntrack -L -f ipv6 -p udp, offloaded in software only
	m := dumpQuery{family: familyIPv6, statusMask: statusOffload | statusHWOffload, statusValue: statusOffload, proto: 17, hasProto: true}.message()
	if m.Header.Type != 1<<8|1 || m.Header.Flags&(0x100|0x200) != 0x300 {
		t.Errorf("header %+v: want IPCTNL_MSG_CT_GET with NLM_F_DUMP", m.Header)
	}
	if m.Data[0] != familyIPv6 {
		t.Errorf("nfgenmsg family %d", m.Data[0])
	}
	seen := map[uint16][]byte{}
	b := m.Data[4:]
	for len(b) > 0 {
		typ, val, rest, err := nextAttr(b)
		if err != nil {
			t.Fatal(err)
		}
		seen[typ], b = val, rest
	}
	if v := seen[ctaStatus]; len(v) != 4 || binary.BigEndian.Uint32(v) != statusOffload {
		t.Errorf("CTA_STATUS %x", v)
	}
	if v := seen[ctaStatusMask]; len(v) != 4 || binary.BigEndian.Uint32(v) != statusOffload|statusHWOffload {
		t.Errorf("CTA_STATUS_MASK %x", v)
	}
	if v := seen[ctaFilter]; len(v) != 8 || binary.NativeEndian.Uint32(v[4:]) != ctaFilterFProtoNum {
		t.Errorf("CTA_FILTER %x: want ORIG_FLAGS = CTA_FILTER_F_CTA_PROTO_NUM in host order", v)
	}
	orig := seen[ctaTupleOrig]
	_, proto, _, err := nextAttr(orig)
	if err != nil {
		t.Fatal(err)
	}
	if typ, num, _, err := nextAttr(proto); err != nil || typ != ctaProtoNum || len(num) != 1 || num[0] != 17 {
		t.Errorf("CTA_TUPLE_ORIG %x: want CTA_TUPLE_PROTO { CTA_PROTO_NUM 17 }", orig)
	}
	// conntrack -L -f ipv4 --reply-dst 192.0.2.1
	m = dumpQuery{family: familyIPv4, hasAddr: true, addr: netip.MustParseAddr("192.0.2.1"), addrSlot: 3}.message()
	seen = map[uint16][]byte{}
	for b := m.Data[4:]; len(b) > 0; {
		typ, val, rest, err := nextAttr(b)
		if err != nil {
			t.Fatal(err)
		}
		seen[typ], b = val, rest
	}
	if v := seen[ctaFilter]; len(v) != 8 || binary.NativeEndian.Uint16(v[2:4]) != ctaFilterReplyFlags || binary.NativeEndian.Uint32(v[4:]) != ctaFilterFIPDst {
		t.Errorf("CTA_FILTER %x: want REPLY_FLAGS = CTA_FILTER_F_CTA_IP_DST", v)
	}
	if _, ok := seen[ctaTupleOrig]; ok {
		t.Error("a reply-side filter carries an original tuple")
	}
	_, ip, _, err := nextAttr(seen[ctaTupleReply])
	if err != nil {
		t.Fatal(err)
	}
	if typ, a, _, err := nextAttr(ip); err != nil || typ != ctaIPv4Dst || !bytes.Equal(a, []byte{192, 0, 2, 1}) {
		t.Errorf("CTA_TUPLE_REPLY %x: want CTA_TUPLE_IP { CTA_IP_V4_DST 192.0.2.1 }", seen[ctaTupleReply])
	}
	if plain := (dumpQuery{}).message(); len(plain.Data) != 4 {
		t.Errorf("an unfiltered dump carries attributes: %x", plain.Data)
	}
}
