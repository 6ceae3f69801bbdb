package why

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected text of the why cases")

// A case is one file under testdata: comment lines ("# first: CODE" names
// the first reason that blocks, "-" none), the facts as JSON, a line
// "----" and the expected `fastpath why` text.
func TestCases(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			head, want, ok := strings.Cut(string(b), "----\n")
			if !ok {
				t.Fatalf("%s: no ---- line", path)
			}
			var first string
			var js strings.Builder
			for _, line := range strings.SplitAfter(head, "\n") {
				if c, ok := strings.CutPrefix(line, "# first: "); ok {
					first = strings.TrimSpace(c)
				} else if !strings.HasPrefix(line, "#") {
					js.WriteString(line)
				}
			}
			var f Facts
			dec := json.NewDecoder(strings.NewReader(js.String()))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&f); err != nil {
				t.Fatalf("%s: facts: %v", path, err)
			}
			a := Explain(f)
			got := Text([]Answer{a})
			if *update {
				if err := os.WriteFile(path, []byte(head+"----\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("%s: text differs (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
			}
			if code := firstBlocking(a); code != first {
				t.Errorf("%s: first reason %q, want %q (reasons %v)", path, code, first, codes(a))
			}
			// The answer is JSON for ubus and LuCI: it must encode.
			if _, err := json.Marshal(a); err != nil {
				t.Errorf("%s: answer does not encode: %v", path, err)
			}
		})
	}
}

func firstBlocking(a Answer) string {
	for _, r := range a.Reasons {
		if r.Blocks || r.Code == "device-maybe" {
			return r.Code
		}
	}
	if len(a.Reasons) > 0 {
		return a.Reasons[0].Code
	}
	return "-"
}

func codes(a Answer) []string {
	var out []string
	for _, r := range a.Reasons {
		out = append(out, r.Code)
	}
	return out
}

// Reasons come in the kernel's order: the cut at ingress, the routing
// decision, fastpath's rule (protocol, packets), then the offload
// expression's checks (TCP state, helper, sequence adjustment, NAT clash)
// and the route's devices.
func TestReasonsInKernelOrder(t *testing.T) {
	b, err := os.ReadFile("testdata/packets.txt")
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(b), "----\n")
	var f Facts
	var js bytes.Buffer
	for _, line := range strings.SplitAfter(head, "\n") {
		if !strings.HasPrefix(line, "#") {
			js.WriteString(line)
		}
	}
	if err := json.Unmarshal(js.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	f.Cut = &Cut{Trigger: "ubus", InFastpath: true}
	f.Entry.Flow.State = "SYN_RECV"
	f.Entry.Helper = "ftp"
	f.Entry.Status |= 1<<6 | 1<<12
	f.Sides[1].Device, f.Sides[1].Kind = "wlan0", "wireless"
	got := codes(Explain(f))
	want := []string{"cut", "packets", "tcp-handshake", "helper", "seqadj", "nat-clash", "device"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("reasons %v, want %v", got, want)
	}
}
