package nft

import (
	"os"
	"testing"

	"github.com/google/nftables"
	"golang.org/x/sys/unix"
)

func gen(pid uint32) *nftables.MonitorEvent {
	return &nftables.MonitorEvent{Type: nftables.MonitorEventType(unix.NFT_MSG_NEWGEN), Data: &nftables.GenMsg{ID: 7, ProcPID: pid}}
}

func TestConcernsUs(t *testing.T) {
	ours := &nftables.Table{Name: TableName, Family: nftables.TableFamilyINet}
	fw4 := &nftables.Table{Name: "fw4", Family: nftables.TableFamilyINet}
	netdevFastpath := &nftables.Table{Name: TableName, Family: nftables.TableFamilyNetdev}
	own := func(pid uint32) bool { return pid == 100 }
	ev := func(pid uint32, changes ...*nftables.MonitorEvent) *nftables.MonitorEvents {
		return &nftables.MonitorEvents{GeneratedBy: gen(pid), Changes: changes}
	}
	change := func(typ nftables.MonitorEventType, data any) *nftables.MonitorEvent {
		return &nftables.MonitorEvent{Type: typ, Data: data}
	}
	cases := []struct {
		name string
		ev   *nftables.MonitorEvents
		want bool
	}{
		{"our table deleted by nft", ev(200, change(nftables.MonitorEventTypeDelTable, ours)), true},
		{"our table deleted by ourselves", ev(100, change(nftables.MonitorEventTypeDelTable, ours)), false},
		{"our chain deleted", ev(200, change(nftables.MonitorEventTypeDelChain, &nftables.Chain{Name: ChainName, Table: ours})), true},
		{"a rule of ours deleted", ev(200, change(nftables.MonitorEventTypeDelRule, &nftables.Rule{Table: ours})), true},
		{"fw4 reload", ev(200, change(nftables.MonitorEventTypeDelChain, &nftables.Chain{Name: "forward", Table: fw4}),
			change(nftables.MonitorEventTypeNewRule, &nftables.Rule{Table: fw4})), false},
		{"same name, netdev family (the cut's table)", ev(200, change(nftables.MonitorEventTypeNewSet, &nftables.Set{Table: netdevFastpath})), false},
		{"undecoded change (a flowtable's devices)", ev(200), true},
	}
	for _, c := range cases {
		if got := concernsUs(c.ev, own); got != c.want {
			t.Errorf("%s: concernsUs = %v, want %v", c.name, got, c.want)
		}
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
