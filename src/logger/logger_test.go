package logger

import (
	"errors"
	"strings"
	"testing"
)

func TestLineShapeAndLevels(t *testing.T) {
	var b strings.Builder
	l := New()
	l.SetOutput(&b)
	e := NewEntry(l).WithField("trigger", "blocklist:ads").WithFields(Fields{"connections": 3, "reason": "on the list"})
	e.Info("cut")
	e.WithError(errors.New("set full")).Warnf("cut %s", "x\ny")
	e.Debug("not written at info")
	want := `level=info msg=cut connections=3 reason="on the list" trigger=blocklist:ads
level=warning msg="cut x\ny" connections=3 error="set full" reason="on the list" trigger=blocklist:ads
`
	if b.String() != want {
		t.Fatalf("log:\n%s\nwant:\n%s", b.String(), want)
	}
	l.SetLevel(DebugLevel)
	if !l.IsLevelEnabled(DebugLevel) {
		t.Fatal("debug not enabled after SetLevel(DebugLevel)")
	}
	b.Reset()
	NewEntry(l).Debug("")
	if b.String() != "level=debug msg=\"\"\n" {
		t.Fatalf("empty message: %q", b.String())
	}
}
