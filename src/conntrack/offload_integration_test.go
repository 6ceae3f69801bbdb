//go:build linux

package conntrack

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/conntrack/cttest"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	ct "github.com/ti-mo/conntrack"
)

// TestIntegrationOffloadedCounts puts UDP flows through a router whose
// flowtable offloads them, beside injected entries that are not, and
// checks that Counts and the offload filters of Select give what a full
// decode by ti-mo/conntrack gives. On a kernel without flowtables
// (CONFIG_NF_FLOW_TABLE; the VM lab sets FASTPATH_EXPECT_FLOWTABLE=1) the
// flowtable is refused, and nothing may be reported offloaded.
func TestIntegrationOffloadedCounts(t *testing.T) {
	if m := labnet.Missing(); m != "" {
		t.Skip("needs " + m)
	}
	lab, err := labnet.New("fpco", true)
	if err != nil {
		t.Fatalf("build netns lab (needs veth, netns, nf_conntrack, nft masquerade): %v", err)
	}
	defer lab.Close()
	var c *Client
	var ref *ct.Conn
	if err := labnet.In(lab.Router, func() (err error) {
		if err = cttest.Inject(300, cttest.Mix); err != nil {
			return err
		}
		if c, err = Open(); err != nil {
			return err
		}
		ref, err = ct.Dial(nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer ref.Close()
	ftErr := lab.Nft(lab.Router, "table inet fpco {\n"+
		"\tflowtable ft { hook ingress priority 0; devices = { lan0, wan0 }; }\n"+
		"\tchain forward { type filter hook forward priority 0; policy accept; meta l4proto udp flow add @ft; }\n}\n")
	expect := os.Getenv("FASTPATH_EXPECT_FLOWTABLE") == "1"
	if expect && ftErr != nil {
		t.Fatalf("flowtable on a kernel that should have them: %v", ftErr)
	}

	// Echoed UDP flows: the reply makes each entry established, and the
	// next datagram puts it in the flowtable.
	const flows = 8
	srv, err := labnet.ListenUDP(lab.Server, labnet.ServerV4+":9400")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	go func() {
		buf := make([]byte, 64)
		for {
			n, from, err := srv.ReadFromUDP(buf)
			if err != nil {
				return
			}
			srv.WriteToUDP(buf[:n], from)
		}
	}()
	for i := 0; i < flows; i++ {
		cl, err := labnet.DialUDP(lab.Client, fmt.Sprintf("%s:%d", labnet.ClientV4, 41000+i), labnet.ServerV4+":9400")
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		go func() {
			buf := make([]byte, 64)
			for k := 0; k < 200; k++ {
				cl.Write([]byte("x"))
				cl.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
				cl.Read(buf)
			}
		}()
	}
	var counts netstate.FlowCounts
	for deadline := time.Now().Add(8 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if counts, err = c.Counts(); err != nil {
			t.Fatal(err)
		}
		if !expect || counts.Offloaded >= flows {
			break
		}
	}
	if expect && counts.Offloaded < flows {
		t.Fatalf("%d of %d echoed flows offloaded after 8 s: %+v", counts.Offloaded, flows, counts)
	}
	if !expect {
		time.Sleep(300 * time.Millisecond) // the echoes run as they would be offloaded
	}

	// The reference: the whole table decoded by ti-mo, then ours.
	all := reference(t, ref)
	counts, err = c.Counts()
	if err != nil {
		t.Fatal(err)
	}
	want := netstate.FlowCounts{Total: len(all)}
	for _, fl := range all {
		if fl.Offload != OffloadNone {
			want.Offloaded++
		}
		if fl.Offload == OffloadHardware {
			want.HWOffloaded++
		}
	}
	// New entries may come between the two reads; offloaded ones may not
	// leave (the flowtable keeps an idle UDP flow for 30 s).
	if counts.Offloaded != want.Offloaded || counts.HWOffloaded != want.HWOffloaded || counts.Total < want.Total {
		t.Errorf("counts %+v, the full decode %+v", counts, want)
	}
	if !expect && counts.Offloaded != 0 {
		t.Errorf("%d entries offloaded on a kernel without flowtables", counts.Offloaded)
	}
	for _, off := range []string{OffloadAny, OffloadSoftware, OffloadHardware} {
		got, total, err := c.Select(Filter{Offload: off}, -1)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, fl := range all {
			if wants(Filter{Offload: off}, fl) {
				n++
			}
		}
		if total != n || len(got) != n {
			t.Errorf("offload %s: %d flows, total %d; the full decode selects %d", off, len(got), total, n)
		}
		for _, fl := range got {
			if !wants(Filter{Offload: off}, fl) || !strings.HasPrefix(fl.Original.Src, "10.90.1.") {
				t.Errorf("offload %s: %+v", off, fl)
			}
		}
	}
}
