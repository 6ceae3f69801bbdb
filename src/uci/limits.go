package uci

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// Limits on what is read, so a broken or hostile file costs bounded memory
// and time. libuci has none; no real config comes near them.
const (
	// MaxStatement bounds one logical line: a statement with its quoted
	// line breaks and backslash continuations, or one staged change.
	MaxStatement = 1 << 20
	// MaxFileSize bounds a config or delta file.
	MaxFileSize = 32 << 20
)

func sizeText(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// readFile is os.ReadFile that refuses a file over MaxFileSize without
// reading it.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(0)
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	tooBig := fmt.Errorf("%s is over %s, the limit for a config or staged changes file: it is not configuration; restore it from a backup (or /rom/etc/config)",
		path, sizeText(MaxFileSize))
	if size > MaxFileSize {
		return nil, tooBig
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+512))
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxFileSize+1)); err != nil {
		return nil, err
	}
	if buf.Len() > MaxFileSize { // it grew while we read it
		return nil, tooBig
	}
	return buf.Bytes(), nil
}
