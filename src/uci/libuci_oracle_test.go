//go:build libuci

package uci

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The real libuci and uci command (openwrt/uci 66127cd, built for this
// host in openwrt-userland) as the oracle of the differential tests.

// oracle runs the uci command on a root of its own: root/etc/config holds
// the configs, root/tmp/.uci the staged changes (as on a router, and where
// Staged looks).
type oracle struct {
	bin, lib, stdbuf string
	root             string
}

func (o *oracle) confDir() string  { return filepath.Join(o.root, "etc", "config") }
func (o *oracle) deltaDir() string { return filepath.Join(o.root, "tmp", ".uci") }

// newOracle finds the uci command under $OPENWRT_USERLAND (default
// ../shared/openwrt-userland beside the repository) and fails the test,
// naming what is missing, when it cannot run it.
func newOracle(t testing.TB) *oracle {
	t.Helper()
	dir := os.Getenv("OPENWRT_USERLAND")
	if dir == "" {
		repo, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(repo, "..", "shared", "openwrt-userland")
	}
	o := &oracle{bin: filepath.Join(dir, "root", "usr", "sbin", "uci"), lib: filepath.Join(dir, "root", "usr", "lib")}
	if _, err := os.Stat(o.bin); err != nil {
		t.Fatalf("the differential test needs the real uci command: %v; set OPENWRT_USERLAND to the openwrt-userland directory (its root/usr/sbin/uci and root/usr/lib)", err)
	}
	// stdout line-buffered into the same pipe as stderr, so that each
	// error message lands between the outputs of the commands around it
	stdbuf, err := exec.LookPath("stdbuf")
	if err != nil {
		t.Fatalf("the differential test needs stdbuf (coreutils) to interleave the uci command's output and errors: %v", err)
	}
	o.stdbuf = stdbuf
	o.root = t.TempDir()
	for _, d := range []string{o.confDir(), o.deltaDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// libuci always reads /tmp/.uci as well (uci_alloc_context adds it to
	// the delta path; -P only adds ours): nothing there may name our
	// packages.
	if m, _ := filepath.Glob("/tmp/.uci/" + pkgPrefix + "*"); len(m) > 0 {
		t.Fatalf("%v exist: libuci would apply them to the test's configs; remove them", m)
	}
	out, err := o.batch("show " + pkgPrefix + "probe\n")
	if err != nil || !strings.Contains(out, "Entry not found") {
		t.Fatalf("the uci command %s does not run here (%v): %q", o.bin, err, out)
	}
	return o
}

// pkgPrefix starts the name of every config the tests make.
const pkgPrefix = "fpd"

// batch runs `uci batch` with commands on stdin and returns stdout and
// stderr interleaved as they were written.
func (o *oracle) batch(commands string) (string, error) {
	cmd := exec.Command(o.stdbuf, "-oL", o.bin, "-c", o.confDir(), "-C", "", "-P", o.deltaDir(), "-n", "batch")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+o.lib)
	cmd.Stdin = strings.NewReader(commands)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// run runs one uci command line (no batch), as a shell would.
func (o *oracle) run(args ...string) (string, error) {
	cmd := exec.Command(o.bin, append([]string{"-c", o.confDir(), "-C", ""}, args...)...)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+o.lib)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// batchQuote quotes a word for `uci batch` (its uci_parse_argument): in
// single quotes, a quote as '\”.
func batchQuote(s string) string { return quote(s) }

// usec and uopt are a config as both sides see it.
type usec struct {
	Name, Type string
	Anon       bool
	Opts       []uopt
}

type uopt struct {
	Name   string
	List   bool
	Values []string
}

func fromFile(f *File) []usec {
	var out []usec
	for _, s := range f.Sections {
		u := usec{Name: s.Name, Type: s.Type, Anon: s.Anonymous}
		for _, o := range s.Options {
			u.Opts = append(u.Opts, uopt{Name: o.Name, List: o.IsList, Values: append([]string(nil), o.Values...)})
		}
		out = append(out, u)
	}
	return out
}

func renderSecs(secs []usec) string {
	var b strings.Builder
	for _, s := range secs {
		fmt.Fprintf(&b, "%s=%s", s.Name, s.Type)
		if s.Anon {
			b.WriteString(" (anonymous)")
		}
		b.WriteByte('\n')
		for _, o := range s.Opts {
			kind := "option"
			if o.List {
				kind = "list"
			}
			fmt.Fprintf(&b, "  %s %s %q\n", kind, o.Name, o.Values)
		}
	}
	return b.String()
}

// outcome is what one side made of a config: its sections, or an error
// on a line.
type outcome struct {
	secs   []usec
	err    bool
	line   int
	reason string // libuci's reason, or our message
}

// reader walks the interleaved output of a batch.
type reader struct {
	s   string
	p   int
	bin string
}

var parseErrorRE = regexp.MustCompile(`^Parse error \((.*)\) at line (\d+), byte (\d+)$`)

// errorLine reads one error message of the uci command, if one is next.
func (r *reader) errorLine() (msg string, ok bool) {
	prefix := r.bin + ": "
	if !strings.HasPrefix(r.s[r.p:], prefix) {
		return "", false
	}
	end := strings.IndexByte(r.s[r.p:], '\n')
	if end < 0 {
		end = len(r.s) - r.p
	}
	msg = r.s[r.p+len(prefix) : r.p+end]
	r.p = min(len(r.s), r.p+end+1)
	return msg, true
}

func (r *reader) expect(lit string) bool {
	if strings.HasPrefix(r.s[r.p:], lit) {
		r.p += len(lit)
		return true
	}
	return false
}

// quoted reads a value as uci_print_value and uci_escape write it: in
// single quotes, a quote inside as '\”.
func (r *reader) quoted() (string, bool) {
	if !r.expect("'") {
		return "", false
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(r.s[r.p:], '\'')
		if i < 0 {
			return "", false
		}
		b.WriteString(r.s[r.p : r.p+i])
		r.p += i + 1
		if !r.expect(`\''`) {
			return b.String(), true
		}
		b.WriteByte('\'')
	}
}

// word reads up to (not including) stop, decoding uci_escape's '\”.
func (r *reader) word(stop byte) (string, bool) {
	i := strings.IndexByte(r.s[r.p:], stop)
	if i < 0 {
		return "", false
	}
	w := r.s[r.p : r.p+i]
	r.p += i
	return strings.ReplaceAll(w, `'\''`, "'"), true
}

// outcome reads what `export PKG` then `show PKG` printed: the config, or
// the parse error both reported.
func (r *reader) outcome(pkg string) (outcome, error) {
	if msg, ok := r.errorLine(); ok {
		msg2, ok2 := r.errorLine()
		if !ok2 || msg2 != msg {
			return outcome{}, fmt.Errorf("export and show of %s disagree: %q, then %q", pkg, msg, msg2)
		}
		m := parseErrorRE.FindStringSubmatch(msg)
		if m == nil {
			return outcome{}, fmt.Errorf("%s: not a parse error: %q", pkg, msg)
		}
		line, _ := strconv.Atoi(m[2])
		return outcome{err: true, line: line, reason: m[1]}, nil
	}
	start := r.p
	secs, err := r.export(pkg)
	if err != nil {
		return outcome{}, fmt.Errorf("%s: %v at %q", pkg, err, clip(r.s[start:], 300))
	}
	if err := r.show(pkg, secs); err != nil {
		return outcome{}, fmt.Errorf("%s: %v at %q", pkg, err, clip(r.s[r.p:], 300))
	}
	return outcome{secs: secs}, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// export reads uci_export_package's text (with -n: every section named).
func (r *reader) export(pkg string) ([]usec, error) {
	if !r.expect("package " + pkg + "\n") {
		return nil, fmt.Errorf("no export header")
	}
	var secs []usec
	for {
		if !r.expect("\nconfig ") {
			if r.expect("\n") {
				return secs, nil
			}
			return nil, fmt.Errorf("no section or end of export")
		}
		typ, ok := r.word(' ')
		if !ok || !r.expect(" ") {
			return nil, fmt.Errorf("bad config line")
		}
		name, ok := r.quoted()
		if !ok || !r.expect("\n") {
			return nil, fmt.Errorf("bad section name")
		}
		s := usec{Name: name, Type: typ}
		for r.expect("\t") {
			list := false
			switch {
			case r.expect("option "):
			case r.expect("list "):
				list = true
			default:
				return nil, fmt.Errorf("bad option line")
			}
			opt, ok := r.word(' ')
			if !ok || !r.expect(" ") {
				return nil, fmt.Errorf("bad option name")
			}
			v, ok := r.quoted()
			if !ok || !r.expect("\n") {
				return nil, fmt.Errorf("bad value")
			}
			n := len(s.Opts)
			if list && n > 0 && s.Opts[n-1].Name == opt && s.Opts[n-1].List {
				s.Opts[n-1].Values = append(s.Opts[n-1].Values, v)
			} else {
				s.Opts = append(s.Opts, uopt{Name: opt, List: list, Values: []string{v}})
			}
		}
		secs = append(secs, s)
	}
}

// show reads `uci show PKG` (extended names) for the sections export gave,
// which tells the anonymous ones: they show as @type[n].
func (r *reader) show(pkg string, secs []usec) error {
	seen := map[string]int{}
	for i := range secs {
		s := &secs[i]
		ext := fmt.Sprintf("@%s[%d]", s.Type, seen[s.Type])
		seen[s.Type]++
		switch {
		case r.expect(showSection(pkg, s.Name, *s)):
		case r.expect(showSection(pkg, ext, *s)):
			s.Anon = true
		default:
			return fmt.Errorf("show does not match export for section %s", s.Name)
		}
	}
	return nil
}

// showSection is uci_show_section's text for a section shown as ref.
func showSection(pkg, ref string, s usec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s.%s=%s\n", pkg, ref, s.Type)
	for _, o := range s.Opts {
		fmt.Fprintf(&b, "%s.%s.%s=", pkg, ref, o.Name)
		for i, v := range o.Values {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(quote(v))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// renderChanges is `uci changes PKG` (uci_show_changes) of our reading of
// the staged changes.
func renderChanges(pkg string, changes []Change) string {
	var b strings.Builder
	for _, c := range changes {
		if c.Op == OpRemove {
			b.WriteByte('-')
		}
		b.WriteString(pkg + "." + c.Section)
		if c.Option != "" {
			b.WriteString("." + c.Option)
		}
		switch c.Op {
		case OpRemove:
		case OpListAdd:
			b.WriteString("+=" + quote(c.Value))
		case OpListDel:
			b.WriteString("-=" + quote(c.Value))
		default:
			b.WriteString("=" + quote(c.Value))
		}
		b.WriteByte('\n')
	}
	return b.String()
}
