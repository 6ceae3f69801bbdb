//go:build linux && !mips

package xdp

import (
	"strings"
	"testing"
)

func TestLogTailIsBounded(t *testing.T) {
	log := []byte("0: first\n1: second\n2: third\n\x00garbage after the NUL")
	if got := logTail(log, 2); got != "1: second\n2: third" {
		t.Errorf("logTail(2) = %q", got)
	}
	long := []byte(strings.Repeat("x", 3*maxLogTail) + "\nlast\n")
	if got := logTail(long, 40); len(got) != maxLogTail || !strings.HasSuffix(got, "\nlast") {
		t.Errorf("logTail of a long line: %d bytes ending %q, want %d ending in the last line", len(got), got[len(got)-6:], maxLogTail)
	}
}
