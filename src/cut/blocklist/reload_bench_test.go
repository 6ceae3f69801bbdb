//go:build linux

package blocklist

import (
	"testing"

	"github.com/mdlayher/netlink"
)

// BenchmarkReload: banIP's reload of the 95,493-prefix interval set as
// its notifications bring it (the set deleted and created again, every
// element a NEWSETELEM of its own, decoded as the watch decodes them),
// committed, and the index brought up to date, beside the other lists.
func BenchmarkReload(b *testing.B) {
	lists, ix := benchIndex()
	l := lists["list00"]
	var msgs [][]byte
	for _, el := range intervalElems(benchPrefixes()["list00"]) {
		msg := newSetElemMsg(b, 1, "banIP", "list00", el.Key)
		if el.IntervalEnd {
			msg = newSetElemEndMsg(b, 1, "banIP", "list00", el.Key)
		}
		msgs = append(msgs, msg)
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuPerOp(b)()
	for i := 0; i < b.N; i++ {
		ix.mu.Lock()
		l.dropAll(true)
		var prev setEvent
		for _, m := range msgs {
			ev, err := parseSetEventAfter(nfnlSubsysNftables<<8|nftMsgNewSetElem, m, prev)
			if err != nil {
				b.Fatal(err)
			}
			prev = ev
			l.queue(ev.Elems, true)
		}
		d := l.commit()
		ix.changed(d)
		ix.mu.Unlock()
	}
}

// BenchmarkLoad: the 95,493-prefix interval set read in full (a dump's
// elements, already decoded) and the index rebuilt.
func BenchmarkLoad(b *testing.B) {
	lists, ix := benchIndex()
	l := lists["list00"]
	els := intervalElems(benchPrefixes()["list00"])
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuPerOp(b)()
	for i := 0; i < b.N; i++ {
		ix.mu.Lock()
		d, _ := l.load(els, true)
		d.removed = true
		ix.changed(d)
		ix.mu.Unlock()
	}
}

// newSetElemEndMsg is newSetElemMsg of one element flagged as an
// interval's end.
func newSetElemEndMsg(t testing.TB, family uint8, table, set string, key []byte) []byte {
	t.Helper()
	val, _ := netlink.MarshalAttributes([]netlink.Attribute{{Type: attrDataValue, Data: key}})
	el, _ := netlink.MarshalAttributes([]netlink.Attribute{{Type: attrElemKey | netlink.Nested, Data: val}, {Type: attrElemFlags, Data: []byte{0, 0, 0, elemFlagIntervalEnd}}})
	list, _ := netlink.MarshalAttributes([]netlink.Attribute{{Type: attrListElem | netlink.Nested, Data: el}})
	body, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: attrElemListTable, Data: append([]byte(table), 0)},
		{Type: attrElemListSet, Data: append([]byte(set), 0)},
		{Type: attrElemListElems | netlink.Nested, Data: list},
	})
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte{family, 0, 0, 0}, body...)
}
