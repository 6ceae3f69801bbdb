package daemon

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/logger"

	"github.com/fastpath-wrt/fastpath/src/lab/boardtree"
	"github.com/fastpath-wrt/fastpath/src/report"
	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/uci"
)

var update = flag.Bool("update", false, "rewrite the expected output of the reconcile state cases")

const (
	boardsDir = "../testdata/boards"
	casesDir  = "testdata/reconcile"
)

// A state case is one file: a description line, its inputs, a separator,
// and what one pass makes of them:
//
//	# hardware asked, the driver refuses flags offload
//	board: mt7621-ax23
//	from: off                (the case whose end state is the kernel before; none: empty kernel)
//	mode: hardware           (what `fastpath set` writes: off, software, hardware, auto)
//	set: fastpath.main.enabled=0
//	kernel: refuses hardware (or: no flowtable, the flowtable modules not loaded)
//	gone: wan                (a device that does not exist now)
//	event: foreign delete    (before the pass; or restart, or cleanup instead of a pass)
//	----
//	<kernel before, changes, UCI writes, events, kernel after, status>
type stateCase struct {
	name, head, want string
	board, from      string
	mode             string
	sets             [][4]string
	refusesHardware  bool
	noFlowtable      bool
	gone             []string
	event            string
}

func readStateCase(t *testing.T, path string) stateCase {
	t.Helper()
	head, want := boardtree.ReadCase(t, path)
	c := stateCase{name: strings.TrimSuffix(filepath.Base(path), ".txt"), head: head, want: want}
	sc := bufio.NewScanner(strings.NewReader(head))
	for sc.Scan() {
		line := sc.Text()
		key, value, _ := strings.Cut(line, ": ")
		switch {
		case strings.HasPrefix(line, "#"), strings.TrimSpace(line) == "":
		case key == "board":
			c.board = value
		case key == "from":
			c.from = value
		case key == "mode":
			c.mode = value
		case key == "set":
			k, v, ok := strings.Cut(value, "=")
			parts := strings.SplitN(k, ".", 3)
			if !ok || len(parts) != 3 {
				t.Fatalf("%s: %q is not set: package.section.option=value", path, line)
			}
			c.sets = append(c.sets, [4]string{parts[0], parts[1], parts[2], v})
		case key == "kernel" && value == "refuses hardware":
			c.refusesHardware = true
		case key == "kernel" && value == "no flowtable":
			c.noFlowtable = true
		case key == "gone":
			c.gone = append(c.gone, value)
		case key == "event" && (value == "foreign delete" || value == "restart" || value == "cleanup"):
			c.event = value
		default:
			t.Fatalf("%s: unknown input line %q (want board:, from:, mode:, set:, kernel: refuses hardware|no flowtable, gone:, event: foreign delete|restart|cleanup, or #)", path, line)
		}
	}
	if c.board == "" || c.mode == "" {
		t.Fatalf("%s: a case names its board: and its mode: (every case says all its inputs, so any case may come before it)", path)
	}
	return c
}

func readStateCases(t *testing.T) map[string]stateCase {
	paths, _ := filepath.Glob(filepath.Join(casesDir, "*.txt"))
	if len(paths) == 0 {
		t.Fatalf("no cases in %s", casesDir)
	}
	cases := map[string]stateCase{}
	for _, p := range paths {
		c := readStateCase(t, p)
		cases[c.name] = c
	}
	for _, c := range cases {
		for seen, f := map[string]bool{c.name: true}, c.from; f != ""; f = cases[f].from {
			if _, ok := cases[f]; !ok {
				t.Fatalf("%s: from: %s, but there is no %s/%s.txt", c.name, f, casesDir, f)
			}
			if seen[f] {
				t.Fatalf("%s: the from: lines make a loop through %s", c.name, f)
			}
			seen[f] = true
		}
	}
	return cases
}

// world is one router: a fixture root and a kernel, and the daemon that
// runs on them now (a restart makes a new one over the same two).
type world struct {
	t       *testing.T
	root    string
	kernel  *fakeKernel
	d       *Daemon
	events  []string
	hidden  string // where gone devices are kept
	baseCfg map[string][]byte
}

func newWorld(t *testing.T, board string) *world {
	t.Helper()
	w := &world{t: t, root: boardtree.Copy(t, boardsDir, board), hidden: t.TempDir(), baseCfg: map[string][]byte{}}
	entries, _ := os.ReadDir(filepath.Join(w.root, "etc/config"))
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(w.root, "etc/config", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		w.baseCfg[e.Name()] = data
	}
	w.kernel = &fakeKernel{root: w.root}
	w.kernel.foreignDelete()
	w.start()
	return w
}

// start is the daemon process starting: a new reconciler and daemon over
// the same root and kernel, with nothing in memory.
func (w *world) start() {
	log := logger.New()
	log.SetOutput(io.Discard)
	r := &Reconciler{Root: w.root, Log: logger.NewEntry(log)}
	r.kernel = kernel{flowtable: fakeFlowtable{w.kernel}, cut: &fakeCut{k: w.kernel}, flows: fakeFlows{w.kernel}}
	w.d = New(context.Background(), r)
	// procd as the set and the UCI fixes tell it: each config.change is
	// an event of the pass, so a second pass must send none.
	r.announcer.call = func(pkg string) error {
		w.events = append(w.events, "procd: config.change "+pkg)
		return nil
	}
	w.d.publish = func(name string, data any) {
		if m, ok := data.(rpc.ModeEvent); ok {
			w.events = append(w.events, fmt.Sprintf("%s %s -> %s", name, m.Previous, m.Mode.Effective))
			return
		}
		w.events = append(w.events, name)
	}
}

// setInputs makes the router's configuration and devices the case's,
// whatever the case before left: UCI is the board's, then the case's.
func (w *world) setInputs(c stateCase) {
	t := w.t
	for name, data := range w.baseCfg {
		if err := os.WriteFile(filepath.Join(w.root, "etc/config", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(w.root, "etc/config/fastpath"))
	if _, err := WriteMode(w.root, c.mode); err != nil {
		t.Fatalf("%s: mode %s: %v", c.name, c.mode, err)
	}
	for _, s := range c.sets {
		if s[0] == "fastpath" {
			if _, err := os.Stat(filepath.Join(w.root, "etc/config/fastpath")); err != nil {
				os.WriteFile(filepath.Join(w.root, "etc/config/fastpath"), []byte("config fastpath 'main'\n"), 0o644)
			}
		}
		if _, err := uci.SetCommitted(w.root, s[0], s[1], s[2], s[3]); err != nil {
			t.Fatalf("%s: set %v: %v", c.name, s, err)
		}
	}
	// Devices: those of the board, less the gone ones.
	net := filepath.Join(w.root, "sys/class/net")
	hidden, _ := os.ReadDir(w.hidden)
	for _, h := range hidden {
		if err := os.Rename(filepath.Join(w.hidden, h.Name()), filepath.Join(net, h.Name())); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range c.gone {
		if err := os.Rename(filepath.Join(net, g), filepath.Join(w.hidden, g)); err != nil {
			t.Fatalf("%s: gone: %s: the board has no such device (%v)", c.name, g, err)
		}
	}
	// The flowtable modules are loaded unless the case says otherwise. No
	// module unloads under a live flowtable: a kernel without them is
	// another boot, which keeps no table, no /var/run and no daemon.
	if c.noFlowtable && w.kernel.canFlowtable() {
		w.kernel.foreignDelete()
		w.kernel.cutTable, w.kernel.cutSets = false, ""
		os.RemoveAll(filepath.Join(w.root, "var/run"))
		w.start()
	}
	for _, m := range []string{"nf_flow_table", "nf_flow_table_inet"} {
		dir := filepath.Join(w.root, "sys/module", m)
		if c.noFlowtable {
			os.RemoveAll(dir)
		} else if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.kernel.refusesHardware = c.refusesHardware
}

// outcome is what one case's event and pass did.
type outcome struct {
	before, changes, uci, events, after, status string
}

func (o outcome) text() string {
	return "kernel before:\n" + o.before + "changes:\n" + o.changes + "uci:\n" + o.uci + "events:\n" + o.events +
		"kernel after:\n" + o.after + "status:\n" + o.status
}

// run applies a case to the world as it is: inputs, the event, a pass.
func (w *world) run(c stateCase) outcome {
	w.setInputs(c)
	return w.pass(c)
}

// again is a second pass with nothing changed in between: what a reload,
// a hotplug or the nftables notification of our own change asks for. After
// a cleanup it is the same cleanup again.
func (w *world) again(c stateCase) outcome {
	if c.event != "cleanup" {
		c.event = ""
	}
	return w.pass(c)
}

// pass runs the case's event and one pass on the world as it is.
func (w *world) pass(c stateCase) outcome {
	var o outcome
	o.before = indent(w.kernel.text())
	cfgBefore := w.uciText()
	w.kernel.changes, w.events = nil, nil
	ctx := context.Background()
	switch c.event {
	case "foreign delete":
		w.kernel.foreignDelete()
	case "restart":
		w.start()
	}
	if c.event == "cleanup" {
		// `fastpath daemon --cleanup`, as the init script's disable runs it:
		// a process of its own that removes our tables and plans nothing.
		w.start()
		if err := w.d.Cleanup(); err != nil {
			w.t.Fatalf("%s: cleanup: %v", c.name, err)
		}
		if err := w.d.Observe(); err != nil {
			w.t.Fatalf("%s: observe: %v", c.name, err)
		}
		o.status = indent(report.StatusText(w.d.Status(ctx)))
	} else {
		o.status = indent(report.StatusText(w.d.runPass(ctx, "test")))
	}
	o.changes = indent(strings.Join(w.kernel.changes, "\n"))
	o.uci = indent(diffLines(cfgBefore, w.uciText()))
	o.events = indent(strings.Join(w.events, "\n"))
	o.after = indent(w.kernel.text())
	return o
}

// uciText is the router's UCI files, one option a line, and the
// hardware-correction file.
func (w *world) uciText() string {
	var lines []string
	entries, _ := os.ReadDir(filepath.Join(w.root, "etc/config"))
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(w.root, "etc/config", e.Name()))
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, e.Name()+": "+l)
			}
		}
	}
	if data, err := os.ReadFile(filepath.Join(w.root, hwCorrectedFile)); err == nil {
		lines = append(lines, hwCorrectedFile+": "+strings.TrimSpace(string(data)))
	}
	return strings.Join(lines, "\n")
}

// diffLines lists the lines b has and a has not (+), and those a had and b has not (-).
func diffLines(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if l != "" && !mb[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if l != "" && !ma[l] {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "  (none)\n"
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ") + "\n"
}

// chain is the case's from: ancestors, the first one first, then the case.
func chain(cases map[string]stateCase, c stateCase) []stateCase {
	var out []stateCase
	for x := c; ; x = cases[x.from] {
		out = append([]stateCase{x}, out...)
		if x.from == "" {
			return out
		}
	}
}

// TestReconcileStates runs each case from the kernel its from: case leaves
// and compares everything the pass did with the case's file. A second pass
// on the same inputs must change nothing: no kernel change, no UCI write,
// no event, the same status.
func TestReconcileStates(t *testing.T) {
	cases := readStateCases(t)
	for _, name := range sortedNames(cases) {
		c := cases[name]
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, c.board)
			var o outcome
			for _, step := range chain(cases, c) {
				o = w.run(step)
			}
			got := o.text()
			if *update {
				if err := os.WriteFile(filepath.Join(casesDir, name+".txt"), []byte(c.head+"----\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if got != c.want {
				t.Errorf("the pass differs (go test ./src/daemon -run TestReconcileStates -update rewrites it)\n--- got\n%s--- want\n%s", got, c.want)
			}
			checkSettled(t, name, o, w.again(c))
		})
	}
}

// TestReconcileStatesInRandomOrder replays every case, one after another
// on one router in a random order, so each is reached from states its
// from: line does not name: whatever came before, a pass ends in the
// case's kernel and status, and a second pass changes nothing.
func TestReconcileStatesInRandomOrder(t *testing.T) {
	cases := readStateCases(t)
	names := sortedNames(cases)
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	t.Logf("order seed %d", seed)
	byBoard := map[string]*world{}
	for round := 0; round < 4; round++ {
		rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		prev := "the empty kernel"
		for _, name := range names {
			c := cases[name]
			w := byBoard[c.board]
			if w == nil {
				w = newWorld(t, c.board)
				byBoard[c.board] = w
			}
			want := parseOutcome(t, c)
			o := w.run(c)
			if o.after != want.after || o.status != want.status {
				t.Errorf("round %d, %s after %s (seed %d): the pass ended elsewhere than from %s\n--- got\nkernel after:\n%sstatus:\n%s--- want\nkernel after:\n%sstatus:\n%s",
					round, name, prev, seed, orNone(c.from), o.after, o.status, want.after, want.status)
			}
			checkSettled(t, name+" after "+prev, o, w.again(c))
			prev = name
		}
	}
}

func checkSettled(t *testing.T, name string, first, again outcome) {
	t.Helper()
	none := "  (none)\n"
	if again.changes != none || again.uci != none || again.events != none {
		t.Errorf("%s: a second pass on the same inputs did something:\nchanges:\n%suci:\n%sevents:\n%s", name, again.changes, again.uci, again.events)
	}
	if again.after != first.after || again.status != first.status {
		t.Errorf("%s: a second pass moved the kernel or the status:\n--- first\n%s%s--- again\n%s%s", name, first.after, first.status, again.after, again.status)
	}
}

func parseOutcome(t *testing.T, c stateCase) outcome {
	t.Helper()
	sections := map[string]string{}
	var cur string
	for _, l := range strings.SplitAfter(c.want, "\n") {
		if l != "" && !strings.HasPrefix(l, "  ") {
			cur = strings.TrimSuffix(strings.TrimSpace(l), ":")
			continue
		}
		sections[cur] += l
	}
	for _, s := range []string{"kernel after", "status"} {
		if sections[s] == "" {
			t.Fatalf("%s: no %q section below ---- (go test ./src/daemon -run TestReconcileStates -update writes them)", c.name, s)
		}
	}
	return outcome{after: sections["kernel after"], status: sections["status"]}
}

func orNone(s string) string {
	if s == "" {
		return "the empty kernel"
	}
	return s
}

func sortedNames(cases map[string]stateCase) []string {
	var names []string
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TestStatusBeforeTheFirstPassSaysStarting: the ubus object answers while
// the first pass runs; its status must say so, not give an empty reason.
func TestStatusBeforeTheFirstPassSaysStarting(t *testing.T) {
	w := newWorld(t, "mt7621-ax23")
	ctx := context.Background()
	if got := w.d.Status(ctx).Mode.Reason; got != StartingReason {
		t.Errorf("status before the first pass: reason %q, want %q", got, StartingReason)
	}
	if got := w.d.runPass(ctx, "start").Mode.Reason; got == StartingReason || got == "" {
		t.Errorf("status after the first pass: reason %q, want the plan's", got)
	}
	if got := w.d.Status(ctx).Mode.Reason; got == StartingReason || got == "" {
		t.Errorf("status after the first pass: reason %q, want the plan's", got)
	}
}
