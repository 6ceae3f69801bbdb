package ppe

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindFlow(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sys/kernel/debug/ppe0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	table := strings.Join([]string{
		"00a1c UNB IPv4 5T orig=192.168.1.23:51234->93.184.216.34:443 new=198.51.100.2:51234->93.184.216.34:443 eth=00:11:22:33:44:55->66:77:88:99:aa:bb etype=0800 vlan=0,0 ib1=10000000 ib2=007f0000",
		"00a1d BND IPv4 5T orig=93.184.216.34:443->198.51.100.2:51234 new=93.184.216.34:443->192.168.1.23:51234 eth=66:77:88:99:aa:bb->00:11:22:33:44:55 etype=0800 vlan=0,0 ib1=20000000 ib2=007f0000",
		"00b00 UNB IPv6 5T orig=fd00:0001:0000:0000:0000:0000:0000:0002:50000->2001:0db8:0000:0000:0000:0000:0000:0007:443 eth=... etype=86dd",
	}, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "entries"), []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	orig := Dir{netip.MustParseAddr("192.168.1.23"), netip.MustParseAddr("93.184.216.34"), 51234, 443}
	reply := Dir{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("198.51.100.2"), 443, 51234}
	if got := FindFlow(root, orig, reply); got.State != "BND" || got.Table != "ppe0" {
		t.Errorf("both directions: %+v, want BND in ppe0 (bound wins)", got)
	}
	if got := FindFlow(root, orig); got.State != "UNB" {
		t.Errorf("original only: %+v, want UNB", got)
	}
	v6 := Dir{netip.MustParseAddr("fd00:1::2"), netip.MustParseAddr("2001:db8::7"), 50000, 443}
	if got := FindFlow(root, v6); got.State != "UNB" {
		t.Errorf("IPv6: %+v, want UNB", got)
	}
	if got := FindFlow(root, Dir{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2"), 1, 2}); got.State != "" || got.Error != "" {
		t.Errorf("absent flow: %+v", got)
	}
}
