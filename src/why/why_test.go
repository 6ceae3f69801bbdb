package why

import (
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
			c := readCase(t, path)
			a := Explain(c.facts)
			got := Text([]Answer{a})
			if *update {
				if err := os.WriteFile(path, []byte(c.head+"----\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != c.want {
				t.Errorf("%s: text differs (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, c.want)
			}
			if code := firstBlocking(a); code != c.first {
				t.Errorf("%s: first reason %q, want %q (reasons %v)", path, code, c.first, codes(a))
			}
			// The answer is JSON for ubus and LuCI: it must encode.
			if _, err := json.Marshal(a); err != nil {
				t.Errorf("%s: answer does not encode: %v", path, err)
			}
		})
	}
}

type whyCase struct {
	head, want, first string
	facts             Facts
}

func readCase(t *testing.T, path string) whyCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c whyCase
	var ok bool
	if c.head, c.want, ok = strings.Cut(string(b), "----\n"); !ok {
		t.Fatalf("%s: no ---- line", path)
	}
	var js strings.Builder
	for _, line := range strings.SplitAfter(c.head, "\n") {
		if code, ok := strings.CutPrefix(line, "# first: "); ok {
			c.first = strings.TrimSpace(code)
		} else if !strings.HasPrefix(line, "#") {
			js.WriteString(line)
		}
	}
	dec := json.NewDecoder(strings.NewReader(js.String()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c.facts); err != nil {
		t.Fatalf("%s: facts: %v", path, err)
	}
	return c
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
	f := readCase(t, "testdata/packets.txt").facts
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

func TestTextOfNoMatch(t *testing.T) {
	if got := Text(nil); !strings.HasPrefix(got, "no connection matches: conntrack holds no entry") || !strings.Contains(got, "notrack") {
		t.Errorf("Text(nil) = %q", got)
	}
}
