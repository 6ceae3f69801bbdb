package uci

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures are what OpenWrt 23.05/24.10 ship or what `uci commit`
// writes; every one must come back byte for byte.
func TestRoundTripFixtures(t *testing.T) {
	names, _ := filepath.Glob("testdata/*-*")
	names = append(names, "testdata/fastpath")
	if len(names) < 5 {
		t.Fatalf("fixtures missing under testdata: found %v", names)
	}
	for _, path := range names {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse(path, data)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if !bytes.Equal(f.Bytes(), data) {
			t.Errorf("%s: Bytes differs from the input", path)
		}
		crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
		g, err := Parse(path, crlf)
		if err != nil {
			t.Errorf("%s with CRLF: %v", path, err)
			continue
		}
		if render(g) != render(f) {
			t.Errorf("%s: CRLF line ends change the meaning:\n%s\nvs\n%s", path, render(g), render(f))
		}
		if !bytes.Equal(g.Bytes(), crlf) {
			t.Errorf("%s: Bytes differs from the CRLF input", path)
		}
	}
}

// What `uci show` prints for these files on a router, spot-checked.
func TestFixtureMeaning(t *testing.T) {
	tests := []struct {
		fixture string
		want    []string // lines of render()
	}{
		{"firewall-23.05-rom", []string{
			"cfg01e63d=defaults (anonymous)", "cfg01e63d.syn_flood=1", "cfg01e63d.forward=REJECT",
			"cfg02dc81=zone (anonymous)", "cfg02dc81.network=[lan]",
			"cfg03dc81.network=[wan|wan6]", "cfg03dc81.masq=1",
			"cfg04ad58=forwarding (anonymous)",
			"cfg0592bd=rule (anonymous)", "cfg0592bd.name=Allow-DHCP-Renew",
			"cfg0992bd.icmp_type=[130/0|131/0|132/0|143/0]",
			"cfg0d92bd.name=Allow-ISAKMP",
		}},
		{"firewall-24.10-committed", []string{
			"cfg01e63d.flow_offloading=1", "cfg01e63d.flow_offloading_hw=1",
			"cfg0eaf89=include (anonymous)", "cfg0eaf89.path=/etc/firewall.user",
			"cfg0f3837.proto=[tcp]", "bcp38=include", "cfg11dc81.network=[tun0_static]",
		}},
		{"network-24.10-ipip", []string{
			"loopback=interface", "globals.ula_prefix=fd7a:51c3:9e2b::/48",
			"cfg030f15=device (anonymous)", "cfg030f15.ports=[lan1|lan2|lan3|lan4]",
			"tun0.proto=ipip", "tun0.peeraddr=203.0.113.7", "tun0.ipaddr=198.51.100.2", "tun0.tunlink=wan",
			"tun0_static.device=@tun0",
		}},
		{"dhcp-24.10", []string{
			"cfg01411c=dnsmasq (anonymous)", "cfg01411c.local=/lan/",
			"lan.ra_flags=[managed-config|other-config]", "odhcpd=odhcpd",
		}},
		{"fastpath", []string{
			"main=fastpath", "main.enabled=1", "main.hw_offload=follow", "main.log_level=info",
			"cfg02eeac=blocklist (anonymous)", "cfg02eeac.set=blocklistv4",
			"cfg03eeac.path=/etc/fastpath/blocklist.txt",
			"cfg04eeac.address=[198.51.100.7|2001:db8:bad::/48]",
		}},
	}
	for _, tt := range tests {
		f := parseFixture(t, tt.fixture)
		lines := "\n" + render(f)
		for _, w := range tt.want {
			if !strings.Contains(lines, "\n"+w+"\n") {
				t.Errorf("%s: no line %q in\n%s", tt.fixture, w, lines)
			}
		}
	}
	f := parseFixture(t, "fastpath")
	if o := f.Sections[0].Option("device"); o != nil {
		t.Errorf("a commented-out list is not a value: %v", o)
	}
}
