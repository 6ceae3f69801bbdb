//go:build libuci

package uci

// The differential test: our reader, writer and staged-change reader
// against the real libuci and uci command, on thousands of generated and
// mutated files, with a fixed seed (make test-uci-libuci), and as a fuzz
// target with the uci command as the oracle:
//
//	go test -tags libuci -run TestLibuci ./src/uci/
//	go test -tags libuci -run '^$' -fuzz FuzzLibuci ./src/uci/
//
// The uci command is found under $OPENWRT_USERLAND (default
// ../shared/openwrt-userland beside the repository); without it the tests
// fail. Where we differ from libuci on purpose (see doc.go), the case is
// counted as documented, never as agreement: a NUL byte is refused; an
// unterminated quote is named on the line it opened; an error on a last
// line without a final newline is named on that line (libuci counts one
// line less); a statement over MaxStatement or a file over MaxFileSize is
// refused. Set refuses what it cannot write as one local edit (counted
// apart, with its reason). When two sections share a name (one named like
// another's generated cfgXXXXXX), Set changes the one addressed, while uci
// set + commit changes the first of that name (its delta names sections by
// name).

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var (
	libuciSeed  = flag.Uint64("libuci.seed", 1, "seed of the differential test's generator")
	libuciCases = flag.Int("libuci.cases", 4000, "generated config files in the differential test")
)

// tally counts cases by verdict and keeps a few examples of each.
type tally struct {
	name     string
	counts   map[string]int
	examples map[string][]string
}

func newTally(name string) *tally {
	return &tally{name: name, counts: map[string]int{}, examples: map[string][]string{}}
}

func (t *tally) add(verdict, example string) {
	t.counts[verdict]++
	if example != "" && len(t.examples[verdict]) < 5 {
		t.examples[verdict] = append(t.examples[verdict], example)
	}
}

// report logs the counts and fails the test for every divergence (a
// verdict starting with "diverge").
func (t *tally) report(tb testing.TB) {
	var keys []string
	total := 0
	for k, n := range t.counts {
		keys = append(keys, k)
		total += n
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d cases\n", t.name, total)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-44s %6d\n", k, t.counts[k])
	}
	for _, k := range keys {
		if strings.HasPrefix(k, "refused") {
			for _, e := range t.examples[k][:min(2, len(t.examples[k]))] {
				fmt.Fprintf(&b, "%s, for instance:\n%s\n", k, e)
			}
		}
	}
	tb.Log(b.String())
	for _, k := range keys {
		if strings.HasPrefix(k, "diverge") {
			tb.Errorf("%s: %d cases %s; for instance:\n%s", t.name, t.counts[k], k, strings.Join(t.examples[k], "\n---\n"))
		}
	}
}

// errorKinds: for each reason libuci gives, what our message says.
var errorKinds = map[string][]string{
	"invalid command":                                    {"invalid command", "without a name", "without a section type"},
	"package without name":                               {"package without a name"},
	"config without name":                                {"config without a section type"},
	"option without name":                                {"option without a name", "list without a name"},
	"insufficient arguments":                             {"without a name", "without a section type"},
	"invalid character in name field":                    {"invalid package name", "invalid section name", "invalid option name", "invalid list name"},
	"invalid character in type field":                    {"invalid section type"},
	"too many arguments":                                 {"too many arguments"},
	"EOF with unterminated '":                            {"unterminated single quote"},
	`EOF with unterminated "`:                            {"unterminated double quote"},
	"option/list command found before the first section": {"before the first section"},
	"section of different type overwrites prior section with same name": {"declared again"},
}

func sameKind(libReason, ours string) bool {
	for _, w := range errorKinds[libReason] {
		if strings.Contains(ours, w) {
			return true
		}
	}
	return false
}

// parseVerdict compares our reading of data with libuci's: "agree: ...",
// "documented: ...", or "diverge: ..." naming the class.
func parseVerdict(data []byte, f *File, err error, lib outcome) (verdict, detail string) {
	var pe *ParseError
	if err != nil {
		pe, _ = err.(*ParseError)
		if pe == nil {
			return "diverge: error of type " + fmt.Sprintf("%T", err), err.Error()
		}
	}
	switch {
	case bytes.IndexByte(data, 0) >= 0:
		if pe == nil {
			return "diverge: NUL byte accepted", ""
		}
		return "documented: NUL byte refused", ""
	case pe != nil && (strings.Contains(pe.Msg, "longer than") || strings.Contains(pe.Msg, "over the")):
		return "documented: over a size limit", ""
	case pe != nil && !lib.err:
		return "diverge: we refuse what libuci reads", fmt.Sprintf("ours: %v\nlibuci:\n%s", err, renderSecs(lib.secs))
	case pe == nil && lib.err:
		return "diverge: we read what libuci refuses", fmt.Sprintf("libuci: %s at line %d\nours:\n%s", lib.reason, lib.line, renderSecs(fromFile(f)))
	case pe != nil:
		detail = fmt.Sprintf("ours: %v\nlibuci: %s at line %d", err, lib.reason, lib.line)
		if !sameKind(lib.reason, pe.Msg) {
			return "diverge: another error", detail
		}
		if strings.HasPrefix(lib.reason, "EOF with unterminated") {
			if pe.Line != lib.line {
				return "documented: unterminated quote named where it opened", ""
			}
			return "agree: the same error on the same line", ""
		}
		if pe.Line == lib.line {
			return "agree: the same error on the same line", ""
		}
		lines := bytes.Count(data, []byte{'\n'})
		if pe.Line == lib.line+1 && !bytes.HasSuffix(data, []byte{'\n'}) && pe.Line == lines+1 {
			return "documented: error on a last line without newline", ""
		}
		if bytes.Contains(data, []byte("\\\n")) || bytes.Contains(data, []byte("\\\r\n")) {
			return "diverge: error line (5: backslash continuation)", detail
		}
		return "diverge: error line", detail
	}
	ours := fromFile(f)
	if renderSecs(ours) == renderSecs(lib.secs) {
		return "agree: the same config", ""
	}
	detail = fmt.Sprintf("ours:\n%slibuci:\n%s", renderSecs(ours), renderSecs(lib.secs))
	if sortedSecs(ours) == sortedSecs(lib.secs) {
		return "diverge: result (2: option order)", detail
	}
	for _, st := range f.stmts {
		if (st.kind == 'o' && (len(st.args) < 2 || st.args[1].val == "")) || st.kind == 'l' {
			if st.kind == 'o' {
				return "diverge: result (1: empty value)", detail
			}
		}
	}
	return "diverge: result", detail
}

// sortedSecs renders sections with their options sorted by name: equal
// for two results that differ only in order.
func sortedSecs(secs []usec) string {
	var c []usec
	for _, s := range secs {
		s.Opts = append([]uopt(nil), s.Opts...)
		sort.Slice(s.Opts, func(i, j int) bool { return s.Opts[i].Name < s.Opts[j].Name })
		c = append(c, s)
	}
	return renderSecs(c)
}

func example(data []byte, detail string) string {
	return fmt.Sprintf("input %q\n%s", clip(string(data), 600), detail)
}

// cases generates the configs of a run: files, and byte mutations of them.
func cases(seed uint64, n int) [][]byte {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x75636921))}
	var out [][]byte
	for len(out) < n {
		f := g.file()
		if g.chance(0.35) {
			f = g.mutate(f)
		}
		out = append(out, f)
	}
	return out
}

func pkgName(kind string, i int) string { return fmt.Sprintf("%s%s%05d", pkgPrefix, kind, i) }

func writeConfigs(t testing.TB, o *oracle, kind string, files [][]byte) {
	t.Helper()
	for i, data := range files {
		if err := os.WriteFile(filepath.Join(o.confDir(), pkgName(kind, i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readAll runs export and show of every config of kind and reads the
// outcomes.
func readAll(t testing.TB, o *oracle, kind string, n int) []outcome {
	t.Helper()
	var cmds strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&cmds, "export %s\nshow %s\n", pkgName(kind, i), pkgName(kind, i))
	}
	out, err := o.batch(cmds.String())
	if err != nil {
		t.Fatalf("uci batch: %v\n%s", err, clip(out, 2000))
	}
	r := &reader{s: out, bin: o.bin}
	outs := make([]outcome, n)
	for i := range outs {
		if outs[i], err = r.outcome(pkgName(kind, i)); err != nil {
			t.Fatalf("reading the uci command's output: %v", err)
		}
	}
	if r.p != len(out) {
		t.Fatalf("the uci command printed more than expected: %q", clip(out[r.p:], 500))
	}
	return outs
}

// TestLibuciRead: our Parse against `uci export` and `uci show`.
func TestLibuciRead(t *testing.T) {
	o := newOracle(t)
	files := cases(*libuciSeed, *libuciCases)
	writeConfigs(t, o, "r", files)
	libs := readAll(t, o, "r", len(files))
	tl := newTally("read (Parse vs uci export/show)")
	for i, data := range files {
		f, err := Parse(filepath.Join(o.confDir(), pkgName("r", i)), data)
		v, d := parseVerdict(data, f, err, libs[i])
		tl.add(v, example(data, d))
	}
	tl.report(t)
}

// setCase is one Set: on a file both sides read alike.
type setCase struct {
	data                []byte
	addr, option, value string
	out                 []byte // our file after Set
	refused             error
	secName             string
	before, after       *File
}

// TestLibuciSet: our Set's file, read by libuci, equals what `uci set`
// makes of the original (the state `uci commit` would write), and every
// line Set did not mean to touch is kept byte for byte.
func TestLibuciSet(t *testing.T) {
	o := newOracle(t)
	g := &gen{r: rand.New(rand.NewPCG(*libuciSeed, 0x736574))}
	var sets []setCase
	for _, data := range cases(*libuciSeed+1, *libuciCases) {
		f, err := Parse("/etc/config/x", data)
		if err != nil || len(f.Sections) == 0 || bytes.IndexByte(data, 0) >= 0 {
			continue
		}
		sets = append(sets, randomSet(g, f, data))
	}
	// the originals first, to keep only the files libuci reads as we do
	originals := make([][]byte, len(sets))
	for i := range sets {
		originals[i] = sets[i].data
	}
	writeConfigs(t, o, "a", originals)
	libs := readAll(t, o, "a", len(sets))
	tl := newTally("set (Set vs uci set)")
	var cmds strings.Builder
	var kept []setCase
	for i, c := range sets {
		f, _ := Parse("/etc/config/x", c.data)
		if v, _ := parseVerdict(c.data, f, nil, libs[i]); !strings.HasPrefix(v, "agree") {
			continue // the reader's differential counts those
		}
		if c.refused != nil {
			tl.add("refused: "+refusal(c.refused), example(c.data, fmt.Sprintf("Set(%s, %s, %q): %v", c.addr, c.option, c.value, c.refused)))
			continue
		}
		kept = append(kept, c)
	}
	// uci set on copies of the originals (staged, then read back with the
	// change applied: what uci commit writes), our files beside them
	var mine [][]byte
	for i, c := range kept {
		mine = append(mine, c.out)
		pkg := pkgName("s", i)
		os.WriteFile(filepath.Join(o.confDir(), pkg), c.data, 0o644)
		fmt.Fprintf(&cmds, "set %s\n", batchQuote(pkg+"."+c.addr+"."+c.option+"="+c.value))
	}
	writeConfigs(t, o, "m", mine)
	if out, err := o.batch(cmds.String()); err != nil || out != "" {
		t.Fatalf("uci set failed: %v\n%s", err, clip(out, 2000))
	}
	theirs := readAll(t, o, "s", len(kept))
	ours := readAll(t, o, "m", len(kept))
	for i, c := range kept {
		ex := example(c.data, fmt.Sprintf("Set(%s, %s, %q) wrote %q", c.addr, c.option, c.value, clip(string(c.out), 600)))
		switch {
		case ours[i].err:
			tl.add("diverge: libuci cannot read what Set wrote", ex+fmt.Sprintf("\nlibuci: %s at line %d", ours[i].reason, ours[i].line))
		case theirs[i].err:
			tl.add("diverge: uci set made a file libuci cannot read", ex)
		case renderSecs(ours[i].secs) != renderSecs(theirs[i].secs) && sharedName(c.before, c.secName):
			// uci set records the change by the section's name, and
			// uci commit replays it onto the first section of that name
			tl.add("documented: two sections of one name, uci set changes the first", "")
		case renderSecs(ours[i].secs) != renderSecs(theirs[i].secs):
			tl.add("diverge: result differs from uci set", ex+"\nours:\n"+renderSecs(ours[i].secs)+"uci set:\n"+renderSecs(theirs[i].secs))
		default:
			if msg := untouchedKept(c); msg != "" {
				tl.add("diverge: a line Set did not mean to touch changed", ex+"\n"+msg)
			} else {
				tl.add("agree", "")
			}
		}
	}
	tl.report(t)
}

// sharedName: another section has that name too (a named section called
// like an anonymous one's generated name).
func sharedName(f *File, name string) bool {
	n := 0
	for _, s := range f.Sections {
		if s.Name == name {
			n++
		}
	}
	return n > 1
}

func refusal(err error) string {
	msg := err.Error()
	for _, w := range []string{"holds more than one statement", "would make the file unreadable", "the edit changed"} {
		if strings.Contains(msg, w) {
			return w
		}
	}
	return msg
}

// randomSet picks a section (by name or @type[n]), an option (present or
// new) and a value, and runs our Set.
func randomSet(g *gen, f *File, data []byte) setCase {
	i := g.r.IntN(len(f.Sections))
	s := f.Sections[i]
	addr := s.Name
	if validName(s.Type) && g.chance(0.5) {
		// extended addressing, as LuCI and our callers use it; the uci
		// command splits its argument at '.', so only plain types
		var n, of int
		for k, t := range f.Sections {
			if t.Type == s.Type {
				if k < i {
					n++
				}
				of++
			}
		}
		addr = fmt.Sprintf("@%s[%d]", s.Type, n)
		if g.chance(0.3) {
			addr = fmt.Sprintf("@%s[%d]", s.Type, n-of)
		}
	}
	option := g.pick("p", "q", "name", "network", "newopt", "flow_offloading")
	if len(s.Options) > 0 && g.chance(0.5) {
		option = s.Options[g.r.IntN(len(s.Options))].Name
	}
	c := setCase{data: data, addr: addr, option: option, value: g.setValue(), secName: s.Name}
	c.before, _ = Parse("/etc/config/x", data)
	if err := f.Set(addr, option, c.value); err != nil {
		c.refused = err
		return c
	}
	c.out = f.Bytes()
	c.after = f
	return c
}

// untouchedKept checks that every line not holding a statement of the
// option, before or after Set, is kept byte for byte and in order.
func untouchedKept(c setCase) string {
	lines := func(s string) []string {
		l := strings.SplitAfter(s, "\n")
		if l[len(l)-1] == "" {
			l = l[:len(l)-1]
		}
		return l
	}
	others := func(src []byte, f *File) (out []string, at []int) {
		ok := optionLines(f, c.secName, c.option)
		for i, l := range lines(string(src)) {
			if !ok[i] {
				out = append(out, l)
				at = append(at, i+1)
			}
		}
		return out, at
	}
	a, atA := others(c.data, c.before)
	b, atB := others(c.out, c.after)
	for k := 0; k < len(a) || k < len(b); k++ {
		switch {
		case k >= len(a):
			return fmt.Sprintf("line %d %q was added", atB[k], b[k])
		case k >= len(b):
			return fmt.Sprintf("line %d %q was removed", atA[k], a[k])
		case a[k] == b[k]:
		case k == len(a)-1 && !bytes.HasSuffix(c.data, []byte("\n")) && (b[k] == a[k]+"\n" || b[k] == a[k]+"\r\n"):
			// the last line, which had no newline, got one
		default:
			return fmt.Sprintf("line %d %q became line %d %q", atA[k], a[k], atB[k], b[k])
		}
	}
	return ""
}

// optionLines are the lines (0-based) holding a statement of option in
// section sec.
func optionLines(f *File, sec, option string) map[int]bool {
	out := map[int]bool{}
	i := f.index(sec)
	if i < 0 {
		return out
	}
	for _, k := range f.Sections[i].stmts {
		st := f.stmts[k]
		if (st.kind == 'o' || st.kind == 'l') && st.args[0].val == option {
			first := bytes.Count(f.src[:st.start], []byte{'\n'})
			last := bytes.Count(f.src[:st.end], []byte{'\n'})
			for l := first; l <= last; l++ {
				out[l] = true
			}
		}
	}
	return out
}

// TestLibuciStaged: Staged reads the changes `uci -P DIR set ...` (and the
// other commands) stage, and any delta file, as libuci's `uci changes`
// does.
func TestLibuciStaged(t *testing.T) {
	o := newOracle(t)
	g := &gen{r: rand.New(rand.NewPCG(*libuciSeed, 0x64656c7461))}
	base := "config zone 'lan'\n\toption p '1'\n\tlist network 'lan'\n\tlist network 'guest'\nconfig rule\n\toption name 'x'\nconfig zone 'wan'\n"
	sections := []string{"lan", "wan", "cfg02dc81", "cfg0292bd"}
	n := *libuciCases / 2
	var cmds strings.Builder
	for i := 0; i < n; i++ {
		pkg := pkgName("d", i)
		os.WriteFile(filepath.Join(o.confDir(), pkg), []byte(base), 0o644)
		if i%2 == 1 { // a delta file as editors and programs leave it
			os.WriteFile(filepath.Join(o.deltaDir(), pkg), g.delta(pkg, sections), 0o644)
			continue
		}
		for k := 1 + g.r.IntN(4); k > 0; k-- { // what uci and LuCI stage
			sec := g.pick("lan", "wan", "@rule[0]", "@zone[-1]")
			opt := g.pick("p", "network", "name", "q")
			v := g.setValue()
			switch g.r.IntN(8) {
			case 0:
				fmt.Fprintf(&cmds, "add_list %s\n", batchQuote(pkg+"."+sec+"."+opt+"="+v))
			case 1:
				fmt.Fprintf(&cmds, "del_list %s\n", batchQuote(pkg+"."+sec+".network=lan"))
			case 2: // delete what exists, so that uci does not fail
				fmt.Fprintf(&cmds, "set %s\n", batchQuote(pkg+".lan.p="+v))
				fmt.Fprintf(&cmds, "delete %s\n", batchQuote(pkg+".lan.p"))
			case 3:
				fmt.Fprintf(&cmds, "set %s\n", batchQuote(pkg+"."+sec+"."+opt+"="))
			case 4:
				fmt.Fprintf(&cmds, "set %s\n", batchQuote(pkg+".wan.tmp=1"))
				fmt.Fprintf(&cmds, "rename %s\n", batchQuote(pkg+".wan.tmp=renamed"))
			case 5:
				fmt.Fprintf(&cmds, "reorder %s\n", batchQuote(pkg+".wan=0"))
			default:
				fmt.Fprintf(&cmds, "set %s\n", batchQuote(pkg+"."+sec+"."+opt+"="+v))
			}
		}
	}
	if out, err := o.batch(cmds.String()); err != nil || out != "" {
		t.Fatalf("staging with uci failed: %v\n%s", err, clip(out, 2000))
	}
	cmds.Reset()
	for i := 0; i < n; i++ {
		fmt.Fprintf(&cmds, "changes %s\n", pkgName("d", i))
	}
	out, err := o.batch(cmds.String())
	if err != nil {
		t.Fatalf("uci changes: %v", err)
	}
	tl := newTally("staged (Staged vs uci changes)")
	p := 0
	for i := 0; i < n; i++ {
		pkg := pkgName("d", i)
		data, _ := os.ReadFile(filepath.Join(o.deltaDir(), pkg))
		changes, _ := Staged(o.root, pkg)
		ours := renderChanges(pkg, changes)
		if strings.HasPrefix(out[p:], ours) && (p+len(ours) == len(out) || nextIsLater(out[p+len(ours):], i)) {
			p += len(ours)
			tl.add("agree", "")
			continue
		}
		// the uci command alone on this config, to find its part
		theirs, err := o.run("-P", o.deltaDir(), "changes", pkg)
		if err != nil || !strings.HasPrefix(out[p:], theirs) {
			t.Fatalf("cannot find the changes of %s in the batch output (%v): %q", pkg, err, clip(out[p:], 500))
		}
		p += len(theirs)
		switch {
		case theirs == ours:
			tl.add("agree", "")
			continue
		case bytes.IndexByte(data, 0) >= 0:
			// libuci's fgets-based reader drops what follows a NUL on
			// its line and glues the next line on, up to its buffer's
			// size; we ignore the line with the NUL
			tl.add("documented: NUL byte in a delta line", "")
			continue
		}
		tl.add(stagedClass(data, ours, theirs), fmt.Sprintf("delta %q\nours:\n%slibuci:\n%s", clip(string(data), 600), ours, theirs))
	}
	if p != len(out) {
		t.Fatalf("uci changes printed more than expected: %q", clip(out[p:], 500))
	}
	tl.report(t)
}

// nextIsLater: what follows belongs to a later config (one whose changes
// come after i's), so i's part has ended.
func nextIsLater(rest string, i int) bool {
	rest = strings.TrimPrefix(rest, "-")
	if !strings.HasPrefix(rest, pkgPrefix+"d") || len(rest) < len(pkgPrefix)+6 {
		return false
	}
	var k int
	if _, err := fmt.Sscanf(rest[len(pkgPrefix)+1:len(pkgPrefix)+6], "%05d", &k); err != nil {
		return false
	}
	return k > i
}

func stagedClass(data []byte, ours, theirs string) string {
	ol := changeLines(ours)
	tl := changeLines(theirs)
	for l, n := range tl {
		if ol[l] < n && strings.ContainsAny(strings.TrimSuffix(l, "\n"), "\r\n") {
			return "diverge: staged (3: value with a line break)"
		}
	}
	for l, n := range ol {
		if tl[l] < n && (bytes.Contains(data, []byte(" \n")) || bytes.Contains(data, []byte("\t\n")) || bytes.Contains(data, []byte("\r\n"))) {
			return "diverge: staged (4: trailing blank or CRLF)"
		}
	}
	return "diverge: staged"
}

// changeLines splits `uci changes` output into changes (a quoted value
// may hold line breaks).
func changeLines(s string) map[string]int {
	out := map[string]int{}
	r := &reader{s: s}
	for r.p < len(s) {
		start := r.p
		for r.p < len(s) && s[r.p] != '\n' && s[r.p] != '\'' {
			r.p++
		}
		if r.p < len(s) && s[r.p] == '\'' {
			if _, ok := r.quoted(); !ok {
				r.p = len(s)
			}
		}
		if r.p < len(s) && s[r.p] == '\n' {
			r.p++
		}
		out[s[start:r.p]]++
	}
	return out
}

// TestLibuciCommitThroughSymlink: `uci commit` on a config that is a
// symlink keeps the link and rewrites its target; so does SetCommitted.
func TestLibuciCommitThroughSymlink(t *testing.T) {
	o := newOracle(t)
	pkg := pkgPrefix + "link"
	data := "config a 'x'\n\toption p '1'\n"
	setup := func(root string) (link, target string) {
		os.MkdirAll(filepath.Join(root, "etc", "config"), 0o755)
		os.MkdirAll(filepath.Join(root, "data"), 0o755)
		target = filepath.Join(root, "data", pkg)
		os.WriteFile(target, []byte(data), 0o640)
		link = ConfigPath(root, pkg)
		if err := os.Symlink("../../data/"+pkg, link); err != nil {
			t.Fatal(err)
		}
		return link, target
	}
	check := func(who, link, target string) {
		if l, err := os.Readlink(link); err != nil || l != "../../data/"+pkg {
			t.Errorf("%s: %s is no longer the symlink: %q %v", who, link, l, err)
		}
		got, _ := os.ReadFile(target)
		f, err := Parse(target, got)
		if err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		if v, _ := f.Sections[0].Get("p"); v != "2" {
			t.Errorf("%s: the link's target holds p=%q, want 2", who, v)
		}
		if st, _ := os.Stat(target); st.Mode().Perm() != 0o640 {
			t.Errorf("%s: target mode %v, want 0640", who, st.Mode().Perm())
		}
	}
	link, target := setup(o.root)
	savedir := t.TempDir()
	for _, args := range [][]string{{"-t", savedir, "set", pkg + ".x.p=2"}, {"-t", savedir, "commit", pkg}} {
		if out, err := o.run(args...); err != nil {
			t.Fatalf("uci %v: %v %s", args, err, out)
		}
	}
	check("uci commit", link, target)

	root := t.TempDir()
	link, target = setup(root)
	if _, err := SetCommitted(root, pkg, "x", "p", "2"); err != nil {
		t.Fatal(err)
	}
	check("SetCommitted", link, target)
}

// FuzzLibuci: any input, read by us and by the uci command: the same
// config or the same error (documented differences aside); and when there
// is a section, our Set's file reads in libuci as `uci set` would make it.
func FuzzLibuci(f *testing.F) {
	fixtures, _ := filepath.Glob("testdata/*-*")
	for _, p := range append(fixtures, "testdata/fastpath") {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	for _, data := range cases(7, 30) {
		f.Add(data)
	}
	o := newOracle(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		pkg := pkgName("f", 0)
		os.WriteFile(filepath.Join(o.confDir(), pkg), data, 0o644)
		os.Remove(filepath.Join(o.deltaDir(), pkg))
		lib := readAll(t, o, "f", 1)[0]
		ours, err := Parse(filepath.Join(o.confDir(), pkg), data)
		if v, d := parseVerdict(data, ours, err, lib); strings.HasPrefix(v, "diverge") {
			t.Fatalf("%s\n%s", v, example(data, d))
		}
		if err != nil || lib.err || len(ours.Sections) == 0 {
			return
		}
		g := &gen{r: rand.New(rand.NewPCG(uint64(len(data)), uint64(data[0])))}
		c := randomSet(g, ours, data)
		if c.refused != nil {
			return
		}
		mine := pkgName("f", 1)
		os.WriteFile(filepath.Join(o.confDir(), mine), c.out, 0o644)
		if out, err := o.batch("set " + batchQuote(pkg+"."+c.addr+"."+c.option+"="+c.value) + "\n"); err != nil || out != "" {
			t.Fatalf("uci set: %v %s", err, out)
		}
		theirs := readAll(t, o, "f", 2)
		if theirs[1].err || renderSecs(theirs[0].secs) != renderSecs(theirs[1].secs) {
			t.Fatalf("Set(%s, %s, %q) on %q wrote %q;\nlibuci reads it as\n%s(error %v %s)\nuci set makes\n%s",
				c.addr, c.option, c.value, data, c.out, renderSecs(theirs[1].secs), theirs[1].err, theirs[1].reason, renderSecs(theirs[0].secs))
		}
		if msg := untouchedKept(c); msg != "" {
			t.Fatal(msg)
		}
	})
}
