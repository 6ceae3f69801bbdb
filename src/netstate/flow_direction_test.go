package netstate

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// stage of each of our packages along observe -> plan -> apply -> verify ->
// report. A package imports only packages of its own stage or before, so
// no import runs against the flow. Lab and test-only packages are not
// listed and may import anything; a new product package must be placed here.
var stage = map[string]int{
	// shared values and libraries that import nothing of a stage
	"netstate": 0, "nlframe": 0, "btf": 0, "uci": 0, "version": 0, "supervise": 0, "logger": 0, "ubus": 0, "ubus/internal/vectors": 0,
	"platform": 1, "nftevents": 1, "cut": 1, // cut: the cut's settings, records and rule text
	// observe
	"config": 2, "observe": 2, "conntrack": 2, "conntrack/internal/ctnl": 2, "ppe": 2, "cut/blocklist": 2, // cut/blocklist: what the block lists hold
	"plan": 3,
	// apply
	"nft": 4, "cut/engine": 4, "cut/xdp": 4,
	// report (verify is the daemon's read-back, in package daemon)
	"status": 6, "report": 6, "rpc": 6, "why": 6, // why: a connection explained from what was observed
	// wiring: the event loop and the binary
	"daemon": 7, "cmd/fastpath": 7,
}

var testOnly = []string{"lab/", "conntrack/cttest", "ubus/ubustest"}

const ourPrefix = "github.com/fastpath-wrt/fastpath/src/"

func TestNoImportRunsAgainstTheFlow(t *testing.T) {
	imports := productImports(t, "..")
	var pkgs []string
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		from, ok := stage[p]
		if !ok {
			t.Errorf("package %s has no stage: place it in stage (src/netstate/flow_direction_test.go)", p)
			continue
		}
		for _, imp := range imports[p] {
			to, ok := stage[imp]
			if !ok {
				t.Errorf("%s imports %s, which has no stage (a test tool?)", p, imp)
			} else if to > from {
				t.Errorf("%s (stage %d) imports %s (stage %d): an import against observe -> plan -> apply -> verify -> report", p, from, imp, to)
			}
		}
	}
	if len(imports["netstate"]) != 0 {
		t.Errorf("netstate imports %v: it must import nothing of ours", imports["netstate"])
	}
}

// productImports maps each product package below root (relative names,
// "cut/engine") to the packages of ours its non-test files import.
func productImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		for _, skip := range testOnly {
			if strings.HasPrefix(rel+"/", skip) || rel == strings.TrimSuffix(skip, "/") {
				return nil
			}
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if _, ok := out[rel]; !ok {
			out[rel] = nil
		}
		for _, s := range f.Imports {
			p, _ := strconv.Unquote(s.Path.Value)
			if p, ok := strings.CutPrefix(p, ourPrefix); ok && !slices.Contains(out[rel], p) {
				out[rel] = append(out[rel], p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("found %d packages below %s: the walk did not see the source tree", len(out), root)
	}
	return out
}
