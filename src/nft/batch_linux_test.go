package nft

import (
	"bytes"
	"testing"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
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
	want := []byte{
		unix.NFPROTO_INET, 0, 0, 0, // nfgenmsg: family inet, version 0, res_id 0
		13, 0, 1, 0, 'f', 'a', 's', 't', 'p', 'a', 't', 'h', 0, 0, 0, 0, // NFTA_FLOWTABLE_TABLE "fastpath"
		7, 0, 2, 0, 'f', 't', 0, 0, // NFTA_FLOWTABLE_NAME "ft"
		36, 0, 3, 0x80, // NFTA_FLOWTABLE_HOOK, nested
		8, 0, 1, 0, 0, 0, 0, 0, // NFTA_FLOWTABLE_HOOK_NUM 0 (ingress), big endian
		8, 0, 2, 0, 0, 0, 0, 0, // NFTA_FLOWTABLE_HOOK_PRIORITY 0 (filter)
		16, 0, 3, 0x80, // NFTA_FLOWTABLE_HOOK_DEVS, nested
		9, 0, 1, 0, 'w', 'a', 'n', '0', 0, 0, 0, 0, // NFTA_DEVICE_NAME "wan0"
	}
	if !bytes.Equal(m.Data, want) {
		t.Fatalf("message data\n got % x\nwant % x", m.Data, want)
	}
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
