package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/logger"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/plan"
	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/status"
	"github.com/fastpath-wrt/fastpath/src/ubus"
	"github.com/fastpath-wrt/fastpath/src/ubus/ubustest"
)

// readmeCommands returns the two fenced blocks of the README's "Commands"
// section: the synopsis and the examples.
func readmeCommands(t *testing.T) (synopsis, examples []string) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks [][]string
	in, inFence := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Commands"
		case in && strings.HasPrefix(line, "```"):
			if inFence = !inFence; inFence {
				blocks = append(blocks, nil)
			}
		case in && inFence:
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], line)
		}
	}
	if len(blocks) != 2 {
		t.Fatalf("README.md's \"## Commands\" section has %d fenced blocks, want 2 (the synopsis, then the examples)", len(blocks))
	}
	return blocks[0], blocks[1]
}

// TestREADMESynopsis: every command's usage is a line of the README's
// synopsis, word for word, and the README lists no command that is not.
func TestREADMESynopsis(t *testing.T) {
	synopsis, _ := readmeCommands(t)
	seen := map[string]bool{}
	for _, line := range synopsis {
		use, _, _ := strings.Cut(line, "   ")
		use = strings.TrimPrefix(strings.TrimSpace(use), "fastpath ")
		name, _, _ := strings.Cut(use, " ")
		var c *command
		for i := range commands {
			if commands[i].name == name {
				c = &commands[i]
			}
		}
		if c == nil {
			t.Errorf("README synopsis line %q: no command %q", line, name)
			continue
		}
		seen[name] = true
		if use != c.usage {
			t.Errorf("README synopsis says\n\tfastpath %s\nthe binary's usage says\n\tfastpath %s", use, c.usage)
		}
	}
	for _, c := range commands {
		if !seen[c.name] {
			t.Errorf("command %q is missing from the README's synopsis", c.name)
		}
	}
}

// readmeCall is what an example must ask the daemon: the method and its
// arguments as JSON ("" for none). print, which asks nobody, has no entry.
var readmeCalls = map[string][]string{
	"status": {"status", ""},
	"flows --offload any --proto tcp --limit 20": {"flows", `{"address":"","limit":20,"offload":"any","proto":"tcp"}`},
	"set auto":                      {"set", "auto"},
	"cut 198.51.100.7 --reason ids": {"cut", `{"address":"198.51.100.7","reason":"ids","tuple":{"proto":"","src":"","dst":"","sport":0,"dport":0}}`},
	"cut 2001:db8:7::/48":           {"cut", `{"address":"2001:db8:7::/48","reason":"","tuple":{"proto":"","src":"","dst":"","sport":0,"dport":0}}`},
	"verdict udp:10.0.1.2:5000:198.51.100.7:53 drop --reason ids": {"verdict", `{"reason":"ids","tuple":{"proto":"udp","src":"10.0.1.2","dst":"198.51.100.7","sport":5000,"dport":53},"verdict":"drop"}`},
	"verdict tcp:[fd00:1::2]:50000:[2001:db8::7]:443 drop":        {"verdict", `{"reason":"","tuple":{"proto":"tcp","src":"fd00:1::2","dst":"2001:db8::7","sport":50000,"dport":443},"verdict":"drop"}`},
	"cuts": {"cuts", ""},
	"verdict udp:10.0.1.2:5000:198.51.100.7:53 forward": {"verdict", `{"reason":"","tuple":{"proto":"udp","src":"10.0.1.2","dst":"198.51.100.7","sport":5000,"dport":53},"verdict":"forward"}`},
	"uncut tcp:[fd00:1::2]:50000:[2001:db8::7]:443":     {"uncut", `{"address":"","reason":"","tuple":{"proto":"tcp","src":"fd00:1::2","dst":"2001:db8::7","sport":50000,"dport":443}}`},
	"uncut 198.51.100.7":                                {"uncut", `{"address":"198.51.100.7","reason":"","tuple":{"proto":"","src":"","dst":"","sport":0,"dport":0}}`},
}

// TestREADMECommands runs every example of the README as written (with
// --ubus pointing at a stand-in ubusd), and checks each exits 0 and asks
// the daemon what the example says.
func TestREADMECommands(t *testing.T) {
	_, examples := readmeCommands(t)
	sock := filepath.Join(t.TempDir(), "ubus.sock")
	broker, err := ubustest.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	ctl := &recordingController{}
	client := ubus.NewClient(sock, logger.NewEntry(logger.New()))
	obj := rpc.New(ctl, nil)
	if err := obj.Register(client); err != nil {
		t.Fatal(err)
	}
	client.Start()
	defer client.Close()
	defer obj.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := client.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	// The examples name files relative to the repository's top.
	wd, _ := os.Getwd()
	if err := os.Chdir(filepath.Join("..", "..", "..")); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)

	ran := map[string]bool{}
	for _, line := range examples {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		words := strings.Fields(line)
		if words[0] != "fastpath" || len(words) < 2 {
			t.Errorf("README example %q does not start with fastpath COMMAND", line)
			continue
		}
		key := strings.Join(words[1:], " ")
		ran[key] = true
		var c *command
		for i := range commands {
			if commands[i].name == words[1] {
				c = &commands[i]
			}
		}
		if c == nil {
			t.Errorf("README example %q: no such command", line)
			continue
		}
		want, known := readmeCalls[key]
		if !known && words[1] != "print" {
			t.Errorf("README example %q has no expected daemon call in readmeCalls: add one", line)
			continue
		}
		before := len(ctl.calls())
		if rc := c.run(append(words[2:], "--ubus", sock)); rc != 0 {
			t.Errorf("README example %q exited %d", line, rc)
			continue
		}
		// The object may read the status besides (set answers with it).
		var got [][2]string
		for _, c := range ctl.calls()[before:] {
			if c[0] != "status" || key == "status" {
				got = append(got, c)
			}
		}
		switch {
		case !known && len(got) != 0:
			t.Errorf("README example %q asked the daemon %v, want nothing", line, got)
		case known && (len(got) != 1 || got[0] != [2]string{want[0], want[1]}):
			t.Errorf("README example %q asked the daemon\n\t%v\nwant\n\t%v", line, got, want)
		}
	}
	for key := range readmeCalls {
		if !ran[key] {
			t.Errorf("readmeCalls has %q, which is no longer a README example", key)
		}
	}
}

// TestCLIForms: flags after positionals, and the errors for what the
// README's forms are not.
func TestCLIForms(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    cut.Tuple
		wantErr string
	}{
		{in: "udp:10.0.1.2:5000:198.51.100.7:53", want: cut.Tuple{Proto: "udp", Src: "10.0.1.2", SrcPort: 5000, Dst: "198.51.100.7", DstPort: 53}},
		{in: "TCP:[fd00::1]:80:[fd00::2]:443", want: cut.Tuple{Proto: "tcp", Src: "fd00::1", SrcPort: 80, Dst: "fd00::2", DstPort: 443}},
		{in: "tcp:[::ffff:192.0.2.1]:1:192.0.2.2:65535", want: cut.Tuple{Proto: "tcp", Src: "192.0.2.1", SrcPort: 1, Dst: "192.0.2.2", DstPort: 65535}},
		{in: "tcp:fd00::1:80:fd00::2:443", wantErr: "SRC looks like an IPv6 address without brackets"},
		{in: "tcp:[fd00::1:80:[fd00::2]:443", wantErr: "SRC"},
		{in: "tcp:10.0.0.1:0:10.0.0.2:443", wantErr: `SPORT "0" is not a port`},
		{in: "tcp:10.0.0.1:80:10.0.0.2:65536", wantErr: `DPORT "65536" is not a port`},
		{in: "tcp:10.0.0.1:80:10.0.0.2", wantErr: "DST is not followed by a port"},
		{in: "tcp:10.0.0.1:80:10.0.0.2:443:9", wantErr: `DPORT "443:9"`},
		{in: "tcp:10.0.0.300:80:10.0.0.2:443", wantErr: `SRC "10.0.0.300" is not an IP address`},
		{in: ":10.0.0.1:80:10.0.0.2:443", wantErr: "PROTO is missing"},
	} {
		got, err := parseConn(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "[fd00::1]") {
				t.Errorf("parseConn(%q): err %v, want one saying %q and showing the bracket form", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("parseConn(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}

	var o options
	fs := newFlags("set", &o, true)
	pos, err := parseArgs(fs, []string{"software", "--root", "/x", "--json"})
	if err != nil || len(pos) != 1 || pos[0] != "software" || o.root != "/x" || !o.json {
		t.Errorf("set software --root /x --json: pos %q, root %q, json %v, err %v", pos, o.root, o.json, err)
	}
	fs = newFlags("cut", &o, true)
	pos, err = parseArgs(fs, []string{"--json", "--", "-1"})
	if err != nil || len(pos) != 1 || pos[0] != "-1" {
		t.Errorf("after --, everything is positional: pos %q, err %v", pos, err)
	}
	for _, args := range [][]string{
		{"cut"},                                      // nothing named
		{"cut", "10.0.0.1", "10.0.0.2"},              // two targets
		{"cut", "10.0.0.1", "--proto", "tcp"},        // both forms
		{"cut", "example.org"},                       // neither form
		{"verdict", "udp:10.0.1.2:5000:10.0.2.2:53"}, // no verdict
		{"verdict", "udp:10.0.1.2:5000:10.0.2.2:53", "reject"},
		{"set"},
		{"status", "extra"},
	} {
		var c *command
		for i := range commands {
			if commands[i].name == args[0] {
				c = &commands[i]
			}
		}
		if rc := c.run(append(args[1:], "--ubus", filepath.Join(t.TempDir(), "none.sock"))); rc == 0 {
			t.Errorf("fastpath %s: exit 0, want an error", strings.Join(args, " "))
		}
	}
}

// recordingController answers every method with an empty success and
// records the method with its arguments as JSON.
type recordingController struct {
	mu  sync.Mutex
	log [][2]string
}

func (r *recordingController) record(method string, args any) {
	text := ""
	switch a := args.(type) {
	case nil:
	case string:
		text = a
	default:
		b, _ := json.Marshal(a)
		text = string(b)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, [2]string{method, text})
}

func (r *recordingController) calls() [][2]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][2]string(nil), r.log...)
}

func (r *recordingController) Status(context.Context) (status.Status, error) {
	r.record("status", nil)
	return status.Status{Mode: plan.Mode{Requested: "software", Effective: "software", Reason: "software offload requested"}}, nil
}

func (r *recordingController) Capabilities(context.Context) (rpc.Capabilities, error) {
	r.record("capabilities", nil)
	return rpc.Capabilities{Modes: []string{"off", "software"}}, nil
}

func (r *recordingController) Flows(_ context.Context, q rpc.FlowQuery) ([]netstate.Flow, int, error) {
	r.record("flows", map[string]any{"offload": q.Offload, "proto": q.Proto, "address": q.Address, "limit": q.Limit})
	return nil, 0, nil
}

func (r *recordingController) SetMode(_ context.Context, mode string) (status.Status, error) {
	r.record("set", mode)
	return status.Status{Mode: plan.Mode{Requested: mode, Effective: mode, Reason: mode + " requested"}}, nil
}

func (r *recordingController) Reload(context.Context) (status.Status, error) {
	r.record("reload", nil)
	return status.Status{}, nil
}

func cutRequestJSON(c rpc.CutRequest) map[string]any {
	return map[string]any{"address": c.Address, "reason": c.Reason, "tuple": c.Tuple}
}

func (r *recordingController) Cut(_ context.Context, c rpc.CutRequest) ([]cut.Cut, error) {
	r.record("cut", cutRequestJSON(c))
	return nil, nil
}

func (r *recordingController) Uncut(_ context.Context, c rpc.CutRequest) (int, error) {
	r.record("uncut", cutRequestJSON(c))
	return 0, nil
}

func (r *recordingController) Verdict(_ context.Context, v rpc.VerdictRequest) ([]cut.Cut, int, error) {
	r.record("verdict", map[string]any{"verdict": v.Verdict, "reason": v.Reason, "tuple": v.Tuple})
	return nil, 0, nil
}

func (r *recordingController) Cuts(context.Context) (cut.Summary, error) {
	r.record("cuts", nil)
	return cut.Summary{}, nil
}
