//go:build linux

package conntrack

import (
	"net/netip"
	"testing"
)

// TestIntegrationEntriesByConnection: a filter's connection, given in
// either direction with its source as the address, finds exactly its
// entry, with the status word the kernel keeps.
func TestIntegrationEntriesByConnection(t *testing.T) {
	c, ref := injectedLab(t, 200)
	all, err := ref.Dump(nil)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, kf := range all {
		fl := mapFlow(refFlow(kf))
		if fl.Proto != "tcp" && fl.Proto != "udp" {
			continue
		}
		for _, dir := range [][2]string{{"original", fl.Original.Src}, {"reply", fl.Reply.Src}} {
			conn := fl.Original
			if dir[0] == "reply" {
				conn = fl.Reply
			}
			src := netip.MustParseAddr(dir[1])
			got, total, err := c.Entries(Filter{Proto: conn.Proto, Address: netip.PrefixFrom(src, src.BitLen()), Conn: conn}, 5)
			if err != nil {
				t.Fatal(err)
			}
			if total != 1 || len(got) != 1 || got[0].Flow.ID != kf.ID || got[0].Status != uint32(kf.Status) {
				t.Fatalf("%s %s: %d entries (total %d) %+v, want id %d with status %#x", dir[0], conn, len(got), total, got, kf.ID, uint32(kf.Status))
			}
		}
		if checked++; checked == 20 {
			break
		}
	}
	if checked == 0 {
		t.Fatal("no TCP or UDP entry to look up")
	}
}
