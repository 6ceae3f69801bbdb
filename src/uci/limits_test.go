package uci

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// allocated is the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A 20 MB value (a blob pasted into LuCI, a corrupted file) is refused at
// the statement limit, naming the file, the line it starts on and the
// limit, with a few MB allocated; it took GBs before the limit.
func TestHugeValueIsRefusedCheaply(t *testing.T) {
	data := hugeValue(20 << 20)
	var err error
	n := allocated(func() { _, err = Parse("/etc/config/x", data) })
	var pe *ParseError
	if !errors.As(err, &pe) || pe.File != "/etc/config/x" || pe.Line != 2 ||
		!strings.Contains(pe.Msg, "statement longer than 1 MiB") {
		t.Fatalf("got %v, want /etc/config/x:2: statement longer than 1 MiB", err)
	}
	if n > 16<<20 {
		t.Errorf("refusing it allocated %d bytes; want under 16 MiB", n)
	}

	// One long physical line, in a delta file: that change is dropped and
	// reported, the next one kept.
	delta := "x.x.a='" + strings.Repeat("v", MaxStatement) + "'\nx.x.b='1'\n"
	changes, err := ParseDelta("/tmp/.uci/x", "x", []byte(delta))
	if len(changes) != 1 || changes[0].Option != "b" || changes[0].Line != 2 {
		t.Errorf("changes %+v", changes)
	}
	if err == nil || !strings.Contains(err.Error(), "/tmp/.uci/x:1: statement longer than 1 MiB") {
		t.Errorf("got %v", err)
	}
}

func TestHugeFileIsRefusedBeforeReading(t *testing.T) {
	root := t.TempDir()
	path := ConfigPath(root, "x")
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, hugeValue(MaxFileSize), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	n := allocated(func() { _, err = Load(root, "x") })
	if err == nil || !strings.Contains(err.Error(), path+" is over 32 MiB") {
		t.Fatalf("got %v", err)
	}
	if n > 1<<20 {
		t.Errorf("refusing it allocated %d bytes", n)
	}
	if _, err := Parse("x", hugeValue(MaxFileSize)); err == nil || !strings.Contains(err.Error(), "x: file is ") {
		t.Errorf("Parse: %v", err)
	}
}
