package nft

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nlenc"
	"golang.org/x/sys/unix"
)

// The one message google/nftables cannot build, byte for byte:
//
//	nft delete flowtable inet fastpath ft { hook ingress priority filter; devices = { wan0 }; }
func TestDelDevicesMessage(t *testing.T) {
	var b batch
	if err := b.delDevices([]string{"wan0"}); err != nil {
		t.Fatal(err)
	}
	if len(b.msgs) != 1 {
		t.Fatalf("%d messages", len(b.msgs))
	}
	m := b.msgs[0]
	if m.Header.Type != netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8|nftables.NFT_MSG_DELFLOWTABLE) ||
		m.Header.Flags != netlink.Request|netlink.Acknowledge {
		t.Fatalf("header %+v", m.Header)
	}
	// Attribute headers (length, type) are in host byte order, values of
	// nf_tables in network byte order.
	var want []byte
	want = append(want, unix.NFPROTO_INET, 0, 0, 0)                         // nfgenmsg: family inet, version 0, res_id 0
	want = append(want, hdr(13, 1)...)                                      // NFTA_FLOWTABLE_TABLE
	want = append(want, 'f', 'a', 's', 't', 'p', 'a', 't', 'h', 0, 0, 0, 0) // "fastpath\0" + pad
	want = append(want, hdr(7, 2)...)                                       // NFTA_FLOWTABLE_NAME
	want = append(want, 'f', 't', 0, 0)                                     // "ft\0" + pad
	want = append(want, hdr(36, 3|unix.NLA_F_NESTED)...)                    // NFTA_FLOWTABLE_HOOK
	want = append(want, hdr(8, 1)...)                                       // NFTA_FLOWTABLE_HOOK_NUM
	want = append(want, 0, 0, 0, 0)                                         // ingress (0), big endian
	want = append(want, hdr(8, 2)...)                                       // NFTA_FLOWTABLE_HOOK_PRIORITY
	want = append(want, 0, 0, 0, 0)                                         // filter (0), big endian
	want = append(want, hdr(16, 3|unix.NLA_F_NESTED)...)                    // NFTA_FLOWTABLE_HOOK_DEVS
	want = append(want, hdr(9, 1)...)                                       // NFTA_DEVICE_NAME
	want = append(want, 'w', 'a', 'n', '0', 0, 0, 0, 0)                     // "wan0\0" + pad
	if !bytes.Equal(m.Data, want) {
		t.Fatalf("message data\n got % x\nwant % x", m.Data, want)
	}
}

// hdr is a netlink attribute header: length and type in host byte order.
func hdr(length, typ uint16) []byte {
	return append(nlenc.Uint16Bytes(length), nlenc.Uint16Bytes(typ)...)
}

// Adding devices re-sends NEWFLOWTABLE without NLM_F_EXCL, naming only the
// new devices, with the live flowtable's flags: the kernel then updates the
// flowtable instead of refusing with EEXIST.
func TestAddDevicesMessage(t *testing.T) {
	b, err := buildBatch([]op{{kind: opAddDevices, devices: []string{"wan1"}, counter: true, action: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.msgs) != 1 || len(b.actions) != 1 || b.actions[0] != "x" {
		t.Fatalf("%d messages, actions %v", len(b.msgs), b.actions)
	}
	m := b.msgs[0]
	if msgType(m) != nftables.NFT_MSG_NEWFLOWTABLE || m.Header.Flags&netlink.Excl != 0 || m.Header.Flags&netlink.Create == 0 {
		t.Fatalf("header %+v: want NEWFLOWTABLE with NLM_F_CREATE and without NLM_F_EXCL", m.Header)
	}
	devs, flags, _ := flowtableOf(m)
	if len(devs) != 1 || devs[0] != "wan1" || flags != uint32(nftables.FlowtableFlagsCounter) {
		t.Fatalf("devices %v flags %d", devs, flags)
	}
	if m.Header.Sequence != 0 || m.Header.PID != 0 {
		t.Fatalf("captured message keeps sequence %d / pid %d: the real socket must number it", m.Header.Sequence, m.Header.PID)
	}
}

// batch.add leans on how google/nftables v0.3.0 flushes through a test
// dial: every queued message in one request, framed by BATCH_BEGIN and
// BATCH_END, satisfied by one ack. A new library version may change that
// contract; this test names the version it was checked against, so a
// go.mod bump fails here first and points at the capture to re-check.
func TestCaptureContract(t *testing.T) {
	const checked = "v0.3.0"
	if v := moduleVersion(t, "github.com/google/nftables"); v != checked {
		t.Fatalf("google/nftables is %s, batch.add was checked against %s: check that Conn.Flush still hands every message to the test dial in one request (BATCH_BEGIN, messages, BATCH_END) and accepts one ack, then update this pin", v, checked)
	}
	var b batch
	err := b.add(func(c *nftables.Conn) error {
		tbl := c.AddTable(&nftables.Table{Family: nftables.TableFamilyINet, Name: TableName})
		c.DelFlowtable(&nftables.Flowtable{Table: tbl, Name: FlowtableName})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var types []int
	for _, m := range b.msgs {
		types = append(types, msgType(m))
		if m.Header.Sequence != 0 || m.Header.PID != 0 {
			t.Fatalf("captured message keeps sequence %d / pid %d", m.Header.Sequence, m.Header.PID)
		}
	}
	want := []int{unix.NFT_MSG_NEWTABLE, nftables.NFT_MSG_DELFLOWTABLE}
	if len(types) != len(want) || types[0] != want[0] || types[1] != want[1] {
		t.Fatalf("captured message types %v, want %v (and no batch framing)", types, want)
	}
}

// moduleVersion is the version go.mod requires of a module path.
func moduleVersion(t *testing.T, path string) string {
	t.Helper()
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatalf("reading the repository's go.mod: %v", err)
	}
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == path {
			return f[1]
		}
	}
	t.Fatalf("go.mod requires no %s", path)
	return ""
}
