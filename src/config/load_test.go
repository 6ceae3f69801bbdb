package config

import (
	"github.com/fastpath-wrt/fastpath/src/cut"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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
		s.Fastpath.CutExpiry != 10*time.Second || s.Fastpath.XDPForward || len(s.Problems) != 0 {
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
	option xdp_forward 'on'

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
	if f.HWOffload != HWFollow || f.CutExpiry != 30*time.Second || f.CutSetSize != 65536 || f.CutInFastpath || f.CutMinPrefix4 != 12 || f.CutMinPrefix6 != 16 || !f.XDPForward {
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

// Numbers are range-checked before they become durations or sizes:
// cut_expiry '18446744084' used to wrap to 10.29 s (2^64 ns is 18446744073.7 s)
// and be taken.
func TestLoadNumbersOutOfRangeAreRefused(t *testing.T) {
	cases := []struct{ option, value, want string }{
		{"cut_expiry", "18446744084", `fastpath.main.cut_expiry: "18446744084" is over the maximum of 86400 seconds; using 10`},
		{"cut_expiry", "99999999999999999999999", `fastpath.main.cut_expiry: "99999999999999999999999" is over the maximum of 86400 seconds; using 10`},
		{"cut_expiry", "86401", `is over the maximum of 86400 seconds`},
		{"cut_expiry", "0", `fastpath.main.cut_expiry: "0" is under the minimum of 1 (use 1 to 86400 seconds); using 10`},
		{"cut_expiry", "-18446744084", `is under the minimum of 1 (use 1 to 86400 seconds)`},
		{"cut_expiry", "10s", `fastpath.main.cut_expiry: "10s" is not a whole number of seconds (1 to 86400); using 10`},
		{"cut_set_size", "4294967297", `fastpath.main.cut_set_size: "4294967297" is over the maximum of 16777216 elements; using 65536`},
		{"cut_set_size", "16777217", `is over the maximum of 16777216 elements`},
	}
	for _, tc := range cases {
		root := t.TempDir()
		writeConfig(t, root, "fastpath", "config fastpath 'main'\n\toption "+tc.option+" '"+tc.value+"'\n")
		s, err := Load(root)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Problems) != 1 || !strings.Contains(s.Problems[0], tc.want) {
			t.Errorf("%s %s: problems %q, want one saying %q", tc.option, tc.value, s.Problems, tc.want)
		}
		if s.Fastpath.CutExpiry != 10*time.Second || s.Fastpath.CutSetSize != 65536 {
			t.Errorf("%s %s: expiry %v, set size %d: want the defaults kept", tc.option, tc.value, s.Fastpath.CutExpiry, s.Fastpath.CutSetSize)
		}
	}
	root := t.TempDir()
	writeConfig(t, root, "fastpath", "config fastpath 'main'\n\toption cut_expiry '86400'\n\toption cut_set_size '16777216'\n")
	s, err := Load(root)
	if err != nil || len(s.Problems) != 0 || s.Fastpath.CutExpiry != 24*time.Hour || s.Fastpath.CutSetSize != 1<<24 {
		t.Errorf("the maxima: %v %q %v %d, want taken as they are", err, s.Problems, s.Fastpath.CutExpiry, s.Fastpath.CutSetSize)
	}
}

func TestLoadOffloadAfterPackets(t *testing.T) {
	for _, c := range []struct {
		value   string
		want    uint64
		problem string
	}{
		{"30", 30, ""},
		{"0", 0, ""},
		{"100000", 100000, ""},
		{"100001", 0, `fastpath.main.offload_after_packets: "100001" is over the maximum of 100000 packets; using 0`},
		{"-1", 0, `"-1" is under the minimum of 0 (use 0 to 100000 packets)`},
		{"18446744073709551616", 0, `"18446744073709551616" is over the maximum of 100000 packets`},
		{"thirty", 0, `"thirty" is not a whole number of packets (0 to 100000)`},
	} {
		root := t.TempDir()
		writeConfig(t, root, "fastpath", "config fastpath 'main'\n\toption offload_after_packets '"+c.value+"'\n")
		s, err := Load(root)
		if err != nil {
			t.Fatal(err)
		}
		if s.Fastpath.OffloadAfterPackets != c.want {
			t.Errorf("%q: offload after %d packets, want %d", c.value, s.Fastpath.OffloadAfterPackets, c.want)
		}
		got := strings.Join(s.Problems, "\n")
		if c.problem == "" && got != "" || !strings.Contains(got, c.problem) {
			t.Errorf("%q: problems %q, want one containing %q", c.value, got, c.problem)
		}
	}
}

func TestLoadSQM(t *testing.T) {
	root := t.TempDir()
	writeConfig(t, root, "sqm", `
config queue 'eth1'
	option enabled '1'
	option interface 'eth1'
	option qdisc 'cake'

config queue 'off'
	option enabled '0'
	option interface 'eth2'

config queue 'default_off'
	option interface 'eth3'

config queue 'nodev'
	option enabled '1'
`)
	writeConfig(t, root, "fastpath", "config fastpath 'main'\n\toption sqm_policy 'whatever'\n")
	s, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := []SQMQueue{{Section: "sqm.eth1", Device: "eth1", Qdisc: "cake"}}; !reflect.DeepEqual(s.SQM, want) {
		t.Errorf("queues %+v, want %+v", s.SQM, want)
	}
	if s.Fastpath.SQMPolicy != SQMPreferSQM {
		t.Errorf("sqm_policy %q, want the default prefer_sqm", s.Fastpath.SQMPolicy)
	}
	problems := strings.Join(s.Problems, "\n")
	for _, want := range []string{"sqm.nodev: an enabled queue without option interface", `sqm_policy: "whatever" is not one of prefer_sqm, prefer_hw`} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems %q lack %q", problems, want)
		}
	}
	// Another package's broken file is a problem, not a failure.
	writeConfig(t, root, "sqm", "config queue 'x\n")
	if s, err = Load(root); err != nil || !strings.Contains(strings.Join(s.Problems, "\n"), "sqm: ") {
		t.Errorf("broken sqm file: %v, problems %q", err, s.Problems)
	}
}

func TestLoadCutBackend(t *testing.T) {
	for _, tc := range []struct{ value, want, problem string }{
		{"", cut.BackendAuto, ""},
		{"auto", cut.BackendAuto, ""},
		{"xdp", cut.BackendXDP, ""},
		{"netdev", cut.BackendNetdev, ""},
		{"XDP", cut.BackendAuto, `fastpath.main.cut_backend: "XDP" is not one of auto, xdp, netdev; using auto`},
		{"generic", cut.BackendAuto, `fastpath.main.cut_backend: "generic" is not one of auto, xdp, netdev; using auto`},
	} {
		root := t.TempDir()
		conf := "config fastpath 'main'\n\toption cut_expiry '10'\n"
		if tc.value != "" {
			conf += "\toption cut_backend '" + tc.value + "'\n"
		}
		writeConfig(t, root, "fastpath", conf)
		s, err := Load(root)
		if err != nil {
			t.Fatal(err)
		}
		if s.Fastpath.CutBackend != tc.want {
			t.Errorf("cut_backend %q: %q, want %q", tc.value, s.Fastpath.CutBackend, tc.want)
		}
		if tc.problem == "" && len(s.Problems) > 0 || tc.problem != "" && (len(s.Problems) != 1 || s.Problems[0] != tc.problem) {
			t.Errorf("cut_backend %q: problems %q, want %q", tc.value, s.Problems, tc.problem)
		}
	}
}

// TestModePackagesAreTheConfigsEachModeWrites: what a set announces to
// procd (config.change) is every config the mode commits, and no other.
func TestModePackagesAreTheConfigsEachModeWrites(t *testing.T) {
	for _, mode := range Modes {
		writes, err := modeWrites(mode)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, w := range writes {
			if !slices.Contains(want, w.pkg) {
				want = append(want, w.pkg)
			}
		}
		if got := ModePackages(mode); !slices.Equal(got, want) {
			t.Errorf("ModePackages(%s) = %v, but the mode writes %v", mode, got, want)
		}
	}
}
