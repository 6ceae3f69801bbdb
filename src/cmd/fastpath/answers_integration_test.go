package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/ubus"
)

// TestIntegrationAnswersFitWithAMalformedList: a watched block-list file
// of 10,000 malformed lines (1.5 MB of problems) used to make `status`
// and `cuts` over 1 MiB, which ubusd refuses, so neither answered. Now
// both answer under the limit with the first problems, how many there
// are in all, and "truncated"; the CLI's text says how many more.
func TestIntegrationAnswersFitWithAMalformedList(t *testing.T) {
	const bad = 10000
	list := filepath.Join(t.TempDir(), "blocklist.txt")
	var b strings.Builder
	b.WriteString("203.0.113.9\n")
	for i := 1; i <= bad; i++ {
		fmt.Fprintf(&b, "not-an-address-%d-%s\n", i, strings.Repeat("x", 80))
	}
	if err := os.WriteFile(list, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ld := startLabDaemon(t, "fpan", "config fastpath 'main'\n\toption enabled '1'\n\n"+
		"config blocklist\n\toption name 'local'\n\toption type 'file'\n\toption path '"+list+"'\n")
	// The daemon answers before its first pass has read the list.
	for deadline := time.Now().Add(30 * time.Second); len(ld.cuts(t).Blocklists) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the block list is never reported")
		}
	}
	for _, method := range []string{"status", "cuts"} {
		raw, err := ld.call(method, nil)
		if err != nil {
			t.Fatalf("%s: %v (%.300s)", method, err, raw)
		}
		v, err := ubus.ParseJSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := ubus.EncodeTable(v.(ubus.Table))
		if err != nil {
			t.Fatal(err)
		}
		if len(enc) >= ubus.MaxMessageLen {
			t.Errorf("%s: answer of %d bytes, ubusd takes at most %d", method, len(enc), ubus.MaxMessageLen)
		}
		s := string(raw)
		if !strings.Contains(s, fmt.Sprintf(`"errors_total":%d`, bad)) || !strings.Contains(s, `"truncated":true`) {
			t.Errorf("%s: no errors_total %d and truncated true in %.600s", method, bad, s)
		}
		if !strings.Contains(s, `blocklist.txt:2: \"not-an-address-1-`) {
			t.Errorf("%s: the first problem (line 2) is not in the answer: %.600s", method, s)
		}
	}
	out, err := exec.Command(buildBinary(t), "cuts", "--ubus", ld.sock).CombinedOutput()
	if err != nil {
		t.Fatalf("fastpath cuts: %v\n%s", err, out)
	}
	if want := fmt.Sprintf("... and %d more problems (%d in all)", bad-100, bad); !strings.Contains(string(out), want) {
		t.Errorf("fastpath cuts does not say %q:\n%.2000s", want, out)
	}
}
