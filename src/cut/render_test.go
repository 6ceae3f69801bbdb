package cut

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func TestRenderGolden(t *testing.T) {
	cases := []struct {
		file    string
		devices []string
		cfg     Config
	}{
		{"render_two_devices.nft", []string{"wan0", "lan0", "lan0", ""}, Config{Enabled: true, InFastpath: true, Expiry: 10 * time.Second, SetSize: 65536}},
		{"render_odd_names.nft", []string{"br-lan", "eth0.2", "pppoe-wan"}, Config{Enabled: true, InFastpath: true, Expiry: 90 * time.Second, SetSize: 1024}},
		{"render_off.nft", []string{"lan0"}, Config{Enabled: true, InFastpath: false}},
		{"render_no_devices.nft", nil, Config{Enabled: true, InFastpath: true}},
	}
	for _, c := range cases {
		got := Render(c.devices, c.cfg)
		path := filepath.Join("testdata", c.file)
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v: create it with go test ./src/cut -run TestRenderGolden -update", err)
		}
		if got != string(want) {
			t.Errorf("Render for %s differs:\n--- got\n%s--- want\n%s", c.file, got, want)
		}
	}
}

func TestChainName(t *testing.T) {
	for dev, want := range map[string]string{"lan0": "in_lan0", "br-lan": "in_br-lan", "eth0.2": "in_eth0.2", "we ird@x": "in_we_ird_x"} {
		if got := ChainName(dev); got != want {
			t.Errorf("ChainName(%q) = %q, want %q", dev, got, want)
		}
	}
}

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{10 * time.Second: "10s", 90 * time.Second: "1m30s", time.Hour: "1h", 0: "1s"} {
		if got := seconds(d); got != want {
			t.Errorf("seconds(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestConfigNormalized(t *testing.T) {
	c, err := Config{Enabled: true}.Normalized()
	if err != nil || c.Expiry != DefaultExpiry || c.SetSize != DefaultSetSize {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	bad := []Config{
		{Expiry: time.Millisecond},
		{SetSize: -1},
		{Blocklists: []BlocklistConfig{{Name: "x", Kind: "nftset", Table: "t"}}},
		{Blocklists: []BlocklistConfig{{Name: "x", Kind: "file"}}},
		{Blocklists: []BlocklistConfig{{Name: "x", Kind: "url"}}},
	}
	for _, b := range bad {
		if _, err := b.Normalized(); err == nil {
			t.Errorf("Normalized(%+v) accepted a bad config", b)
		}
	}
}
