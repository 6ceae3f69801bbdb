package nft

import (
	"os"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// msg is one nf_tables notification: nfgenmsg of family, then attrs.
func msg(t *testing.T, family uint8, attrs ...netlink.Attribute) []byte {
	t.Helper()
	b, err := netlink.MarshalAttributes(attrs)
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte{family, 0, 0, 0}, b...)
}

func TestConcernsUs(t *testing.T) {
	table := func(name string) netlink.Attribute { return netlink.Attribute{Type: 1, Data: append([]byte(name), 0)} }
	typ := func(m int) uint16 { return uint16(unix.NFNL_SUBSYS_NFTABLES<<8 | m) }
	cases := []struct {
		name     string
		typ      uint16
		data     []byte
		gen, our bool
	}{
		{"our table deleted", typ(unix.NFT_MSG_DELTABLE), msg(t, unix.NFPROTO_INET, table(TableName)), false, true},
		{"our chain deleted", typ(unix.NFT_MSG_DELCHAIN), msg(t, unix.NFPROTO_INET, table(TableName), netlink.Attribute{Type: 3, Data: []byte(ChainName + "\x00")}), false, true},
		{"a rule of ours deleted", typ(unix.NFT_MSG_DELRULE), msg(t, unix.NFPROTO_INET, table(TableName)), false, true},
		{"our flowtable changed", typ(unix.NFT_MSG_NEWFLOWTABLE), msg(t, unix.NFPROTO_INET, table(TableName)), false, true},
		{"fw4 reload: its forward-path rules are compared", typ(unix.NFT_MSG_DELCHAIN), msg(t, unix.NFPROTO_INET, table("fw4")), false, true},
		{"a rule of fw4 added", typ(unix.NFT_MSG_NEWRULE), msg(t, unix.NFPROTO_INET, table("fw4")), false, true},
		{"elements of a set of fw4", typ(unix.NFT_MSG_NEWSETELEM), msg(t, unix.NFPROTO_INET, table("fw4")), false, false},
		{"another inet table", typ(unix.NFT_MSG_NEWRULE), msg(t, unix.NFPROTO_INET, table("banIP")), false, false},
		{"same name, netdev family (the cut's table)", typ(unix.NFT_MSG_NEWSET), msg(t, unix.NFPROTO_NETDEV, table(TableName)), false, false},
		{"a block list's elements", typ(unix.NFT_MSG_NEWSETELEM), msg(t, unix.NFPROTO_INET, table("banIP")), false, false},
		{"a kind this code does not know", typ(unix.NFT_MSG_DELFLOWTABLE + 9), msg(t, unix.NFPROTO_INET, table("x")), false, true},
		{"end of a generation", typ(unix.NFT_MSG_NEWGEN), msg(t, 0, netlink.Attribute{Type: 2, Data: []byte{0, 0, 0, 100}}), true, false},
		{"not nf_tables", uint16(1<<8 | 0), msg(t, unix.NFPROTO_INET, table(TableName)), false, false},
	}
	for _, c := range cases {
		if gen, ours := concernsUs(c.typ, c.data); gen != c.gen || ours != c.our {
			t.Errorf("%s: concernsUs = %v %v, want %v %v", c.name, gen, ours, c.gen, c.our)
		}
	}
	if pid := genPID(msg(t, 0, netlink.Attribute{Type: 1, Data: []byte{0, 0, 0, 7}}, netlink.Attribute{Type: 2, Data: []byte{0, 0, 0, 100}})); pid != 100 {
		t.Errorf("genPID = %d, want 100", pid)
	}
}

func TestIsOwnTask(t *testing.T) {
	if !isOwnTask(uint32(os.Getpid())) {
		t.Fatal("our own pid is not ours")
	}
	if isOwnTask(1) && os.Getpid() != 1 {
		t.Fatal("pid 1 taken as one of our threads")
	}
}
