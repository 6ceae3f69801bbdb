//go:build linux

package blocklist

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
)

// TestIntegrationSetDumpReadsEveryElement: the set dump, read 64 KiB at a
// time, returns what the netlink library's dump returns, element for
// element, for an interval set of 20,000 prefixes (a dump in many parts)
// and an empty one.
func TestIntegrationSetDumpReadsEveryElement(t *testing.T) {
	if m := labnet.Missing(); m != "" {
		t.Skip("needs " + m)
	}
	lab, err := labnet.New("fpsd", false)
	if err != nil {
		t.Fatal(err)
	}
	defer lab.Close()
	var els []string
	for i := 0; i < 20000; i++ {
		a := netip.AddrFrom4([4]byte{11, byte(i >> 8), byte(i), 1})
		if i%5 == 0 {
			els = append(els, netip.PrefixFrom(a, 24).Masked().String())
		} else {
			els = append(els, a.String())
		}
	}
	script := "table inet banIP {\n\tset dns.v4 { type ipv4_addr; flags interval; auto-merge; elements = { " + strings.Join(els, ", ") + " } }\n" +
		"\tset empty.v6 { type ipv6_addr; flags interval; }\n}\n"
	if err := lab.Nft(lab.Router, script); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"dns.v4", "empty.v6"} {
		var got []rawElem
		var want []nftables.SetElement
		if err := labnet.In(lab.Router, func() error {
			var err error
			conn, err := netlink.Dial(unix.NETLINK_NETFILTER, nil)
			if err != nil {
				return err
			}
			defer conn.Close()
			if got, err = dumpSetElements(conn, nftFamilies["inet"], "banIP", name); err != nil {
				return err
			}
			c, err := nftables.New()
			if err != nil {
				return err
			}
			set, err := c.GetSetByName(&nftables.Table{Name: "banIP", Family: nftables.TableFamilyINet}, name)
			if err != nil {
				return err
			}
			want, err = c.GetSetElements(set)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("set %s: the dump read %d elements, the library %d", name, len(got), len(want))
		}
		for i := range want {
			w := rawElem{Key: want[i].Key, KeyEnd: want[i].KeyEnd, IntervalEnd: want[i].IntervalEnd}
			if fmt.Sprint(got[i]) != fmt.Sprint(w) {
				t.Fatalf("set %s, element %d: the dump read %v, the library %v", name, i, got[i], w)
			}
		}
		if name == "dns.v4" && len(got) < 20000 {
			t.Fatalf("set %s holds %d elements, want at least 20,000 (a start and an end per prefix)", name, len(got))
		}
	}
}
