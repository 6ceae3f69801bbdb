package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/uci"
)

func writeConfig(t *testing.T, root, pkg, text string) {
	t.Helper()
	dir := filepath.Join(root, "etc/config")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, pkg), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadMissingFilesMeanDefaults(t *testing.T) {
	s, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if s.Offload.FlowOffloading || s.Fastpath.HWOffload != HWFollow || !s.Fastpath.CutInFastpath ||
		s.Fastpath.CutExpiry != 10*time.Second || len(s.Problems) != 0 {
		t.Fatalf("settings = %+v", s)
	}
}

func TestLoadValuesAndProblems(t *testing.T) {
	root := t.TempDir()
	writeConfig(t, root, "firewall", "config defaults\n\toption flow_offloading '1'\n\toption flow_offloading_hw 'maybe'\n")
	writeConfig(t, root, "fastpath", `
config fastpath 'main'
	option hw_offload 'sometimes'
	option cut_expiry '30'
	option cut_set_size '20000000'
	option cut_in_fastpath 'off'
	option cut_min_prefix4 '12'
	option cut_min_prefix6 '0'

config blocklist
	option name 'banip'
	option type 'nftset'
	option table 'banIP'
	option set 'blocklistv4'

config blocklist
	option type 'list'
	list address '198.51.100.7'
	list address '2001:db8:bad::/48'
	list address 'not-an-ip'

config blocklist
	option type 'file'
	option path 'relative.txt'

config blocklist
	option name 'arpwatch'
	option type 'nftset'
	option family 'arp'
	option table 'filter'
	option set 'hosts'

config blocklist
	option name 'paused'
	option enabled '0'
	option type 'list'
	list address '192.0.2.1'
`)
	s, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Offload.FlowOffloading || s.Offload.FlowOffloadingHW {
		t.Errorf("offload = %+v", s.Offload)
	}
	f := s.Fastpath
	if f.HWOffload != HWFollow || f.CutExpiry != 30*time.Second || f.CutSetSize != 65536 || f.CutInFastpath || f.CutMinPrefix4 != 12 || f.CutMinPrefix6 != 16 {
		t.Errorf("fastpath = %+v", f)
	}
	if len(f.Blocklists) != 2 || f.Blocklists[0].Family != "inet" || len(f.Blocklists[1].Addresses) != 2 {
		t.Errorf("blocklists = %+v", f.Blocklists)
	}
	for _, want := range []string{"flow_offloading_hw", "hw_offload", "cut_set_size", `cut_min_prefix6: "0" is not a prefix length from 1 to 128; using 16`, "not-an-ip", "relative.txt", `fastpath.@blocklist[3].family: "arp" is not a family of address sets`} {
		found := false
		for _, p := range s.Problems {
			found = found || strings.Contains(p, want)
		}
		if !found {
			t.Errorf("no problem names %q: %q", want, s.Problems)
		}
	}
}

func TestLoadBrokenFileIsAnError(t *testing.T) {
	root := t.TempDir()
	writeConfig(t, root, "firewall", "config defaults\n\toption flow_offloading '1\n")
	_, err := Load(root)
	if err == nil || !strings.Contains(err.Error(), "firewall") {
		t.Fatalf("err = %v, want one naming the firewall file", err)
	}
}

func TestWriteModeKeepsTheRest(t *testing.T) {
	root := t.TempDir()
	fw := "# managed by hand\nconfig defaults\n\toption input 'REJECT'\n\toption flow_offloading '0'\n\nconfig zone\n\toption name 'lan'\n"
	writeConfig(t, root, "firewall", fw)
	for _, mode := range []string{"hardware", "software", "auto", "off"} {
		if _, err := WriteMode(root, mode); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		s, err := Load(root)
		if err != nil {
			t.Fatal(err)
		}
		on := mode != "off"
		if s.Offload.FlowOffloading != on {
			t.Errorf("%s: flow_offloading = %v", mode, s.Offload.FlowOffloading)
		}
		if mode == "hardware" && (!s.Offload.FlowOffloadingHW || s.Fastpath.HWOffload != HWFollow) {
			t.Errorf("hardware: %+v %+v", s.Offload, s.Fastpath)
		}
		if mode == "auto" && s.Fastpath.HWOffload != HWAuto {
			t.Errorf("auto: hw_offload = %s", s.Fastpath.HWOffload)
		}
	}
	data, _ := os.ReadFile(filepath.Join(root, "etc/config/firewall"))
	for _, keep := range []string{"# managed by hand", "option input 'REJECT'", "option name 'lan'"} {
		if !strings.Contains(string(data), keep) {
			t.Errorf("firewall lost %q:\n%s", keep, data)
		}
	}
	if _, err := WriteMode(root, "turbo"); err == nil || !strings.Contains(err.Error(), "off, software, hardware, auto") {
		t.Errorf("bad mode: %v", err)
	}
	if _, err := uci.Load(root, "fastpath"); err != nil {
		t.Errorf("fastpath file not written: %v", err)
	}
}
