package report

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/config"
	"github.com/fastpath-wrt/fastpath/src/lab/boardtree"
	"github.com/fastpath-wrt/fastpath/src/observe"
	"github.com/fastpath-wrt/fastpath/src/plan"
	"github.com/fastpath-wrt/fastpath/src/uci"
)

var update = flag.Bool("update", false, "rewrite the expected output of the print golden cases")

const boardsDir = "../testdata/boards"

// A print case is one file: a description line, the board fixture, UCI
// options set on top of it (and the kernel release it runs, if not the
// board's), a separator, and the expected `fastpath print`.
//
//	# Archer C7 v2, hardware offload asked for
//	board: archer-c7-v2
//	set: firewall.@defaults[0].flow_offloading=1
//	----
//	<expected output>
type printCase struct {
	board  string
	sets   [][4]string // package, section, option, value
	mode   string      // `fastpath set` mode written before planning
	kernel string      // the running kernel's release, instead of the board's
	want   string
	head   string
}

func readCase(t *testing.T, path string) printCase {
	t.Helper()
	head, want := boardtree.ReadCase(t, path)
	c := printCase{want: want, head: head}
	sc := bufio.NewScanner(strings.NewReader(head))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"), strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "board: "):
			c.board = strings.TrimPrefix(line, "board: ")
		case strings.HasPrefix(line, "mode: "):
			c.mode = strings.TrimPrefix(line, "mode: ")
		case strings.HasPrefix(line, "kernel: "):
			c.kernel = strings.TrimPrefix(line, "kernel: ")
		case strings.HasPrefix(line, "set: "):
			kv := strings.TrimPrefix(line, "set: ")
			key, value, ok := strings.Cut(kv, "=")
			parts := strings.SplitN(key, ".", 3)
			if !ok || len(parts) != 3 {
				t.Fatalf("%s: %q is not package.section.option=value", path, line)
			}
			c.sets = append(c.sets, [4]string{parts[0], parts[1], parts[2], value})
		default:
			t.Fatalf("%s: unknown input line %q (want board:, mode:, kernel:, set: or #)", path, line)
		}
	}
	if c.board == "" {
		t.Fatalf("%s: no board: line", path)
	}
	return c
}

func TestPrintGolden(t *testing.T) {
	cases, _ := filepath.Glob("testdata/print/*.txt")
	if len(cases) == 0 {
		t.Fatal("no cases in testdata/print")
	}
	for _, path := range cases {
		name := strings.TrimSuffix(filepath.Base(path), ".txt")
		t.Run(name, func(t *testing.T) {
			c := readCase(t, path)
			root := boardtree.Copy(t, boardsDir, c.board)
			if c.kernel != "" {
				if err := os.WriteFile(filepath.Join(root, "proc/sys/kernel/osrelease"), []byte(c.kernel+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if c.mode != "" {
				if _, err := config.WriteMode(root, c.mode); err != nil {
					t.Fatalf("mode %s: %v", c.mode, err)
				}
			}
			for _, s := range c.sets {
				ensureFile(t, root, s[0])
				if _, err := uci.SetCommitted(root, s[0], s[1], s[2], s[3]); err != nil {
					t.Fatalf("set %v: %v", s, err)
				}
			}
			snap, err := observe.Observe(root)
			if err != nil {
				t.Fatal(err)
			}
			got := NewPrintout(snap, plan.Make(snap, plan.Constraints{})).Text()
			if *update {
				if err := os.WriteFile(path, []byte(c.head+"----\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != c.want {
				t.Errorf("fastpath print differs (go test ./src/report -update rewrites it)\n--- got\n%s--- want\n%s", got, c.want)
			}
		})
	}
}

// ensureFile gives a case that sets an option of a package the board has
// no file for (fastpath, as shipped) a file with the default section.
func ensureFile(t *testing.T, root, pkg string) {
	path := filepath.Join(root, "etc/config", pkg)
	if _, err := os.Stat(path); err == nil || pkg != "fastpath" {
		return
	}
	if err := os.WriteFile(path, []byte("config fastpath 'main'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
