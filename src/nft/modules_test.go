package nft

import (
	"strings"
	"testing"
)

func TestModuleDetail(t *testing.T) {
	// root-flowtable: /proc/modules of a router with kmod-nft-offload, plus
	// a /sys/module entry for a module /proc/modules does not list.
	if d := moduleDetail("testdata/root-flowtable", "nf_flow_table", "nf_flow_table_inet", "nft_flow_offload"); d != "" {
		t.Errorf("all modules present, detail %q", d)
	}
	d := moduleDetail("testdata/root-none", "nf_flow_table", "nf_flow_table_inet")
	if d != "not loaded here: nf_flow_table, nf_flow_table_inet" {
		t.Errorf("detail %q", d)
	}
	if d := moduleDetail("testdata/does-not-exist", "nft_flow_offload"); !strings.Contains(d, "nft_flow_offload") {
		t.Errorf("unreadable root: detail %q should name the module", d)
	}
}

func FuzzModulesListed(f *testing.F) {
	f.Add("nf_flow_table 40960 2 nf_flow_table_inet, Live 0x0\n", "nf_flow_table")
	f.Add("nf_flow_table_inet 12288 0 - Live 0x0", "nf_flow_table")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, text, name string) {
		got := modulesListed(strings.NewReader(text), name)
		// A module is listed exactly when some line starts with its name
		// as a whole word (lines beyond the scanner's 64 KiB limit aside).
		want := false
		for _, line := range strings.Split(text, "\n") {
			if len(line) >= 64*1024 {
				return
			}
			if fields := strings.Fields(line); len(fields) > 0 && fields[0] == name {
				want = true
			}
		}
		if strings.ContainsAny(text, "\r") {
			return // the scanner and Split disagree on \r; /proc never writes it
		}
		if got != want {
			t.Fatalf("modulesListed(%q, %q) = %v, want %v", text, name, got, want)
		}
	})
}
