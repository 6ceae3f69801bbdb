package observe

import (
	"reflect"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/config"
	"github.com/fastpath-wrt/fastpath/src/platform"
)

func TestShapersGatherTheEvidence(t *testing.T) {
	sqm := []config.SQMQueue{{Section: "sqm.eth1", Device: "eth1", Qdisc: "cake"}}
	devs := []platform.Device{{Name: "eth1"}, {Name: "ifb4eth1"}, {Name: "ifb4pppoe-wan"}, {Name: "ifb0"}, {Name: "lan1"}}
	qdiscs := map[string]string{"eth1": "cake", "lan1": "fq_codel", "pppoe-wan": "htb", "eth0": "mq"}
	got := shapers(sqm, devs, qdiscs)
	want := []Shaper{
		{Device: "eth1", Evidence: []string{"sqm.eth1 is enabled (cake)", "ifb4eth1 exists (sqm-scripts' ingress mirror)", "root qdisc cake"}},
		{Device: "pppoe-wan", Evidence: []string{"ifb4pppoe-wan exists (sqm-scripts' ingress mirror)", "root qdisc htb"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("shapers\n got %+v\nwant %+v", got, want)
	}
	if got := shapers(nil, []platform.Device{{Name: "lan1"}}, map[string]string{"lan1": "fq_codel"}); len(got) != 0 {
		t.Errorf("OpenWrt's default fq_codel shapes nothing: %+v", got)
	}
}
