// Package logger writes leveled log lines as key=value text (level, msg,
// then the fields sorted by key), the shape procd's log and grep read.
//
// It replaces a general logging library whose formatters, hooks and
// reflection cost the mips build about 50 KB: the daemon needs levels,
// fields and one text format, nothing more.
package logger

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Level orders log lines by importance; a Logger writes its level and the
// ones before it.
type Level int

const (
	ErrorLevel Level = iota
	WarnLevel
	InfoLevel
	DebugLevel
)

var levelNames = [...]string{"error", "warning", "info", "debug"}

func (l Level) String() string {
	if l < ErrorLevel || l > DebugLevel {
		return "level" + strconv.Itoa(int(l))
	}
	return levelNames[l]
}

// Fields are key=value pairs of one line.
type Fields map[string]any

// Logger writes lines at or above its level to one writer; lines of
// concurrent callers never interleave.
type Logger struct {
	mu    sync.Mutex
	out   io.Writer
	level Level
}

// New returns a Logger writing info and above to stderr.
func New() *Logger { return &Logger{out: os.Stderr, level: InfoLevel} }

var std = NewEntry(New())

// Default is the process-wide entry (stderr, info), for callers given none.
func Default() *Entry { return std }

func (l *Logger) SetOutput(w io.Writer) {
	l.mu.Lock()
	l.out = w
	l.mu.Unlock()
}

func (l *Logger) SetLevel(v Level) {
	l.mu.Lock()
	l.level = v
	l.mu.Unlock()
}

// IsLevelEnabled says whether lines of level v are written, so a caller
// can skip building fields nobody reads.
func (l *Logger) IsLevelEnabled(v Level) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return v <= l.level
}

// WithField starts an entry of l with one field.
func (l *Logger) WithField(key string, value any) *Entry { return NewEntry(l).WithField(key, value) }

// Entry is a Logger with fields for every line it writes.
type Entry struct {
	Logger *Logger
	fields Fields
}

// NewEntry returns an entry of l without fields.
func NewEntry(l *Logger) *Entry { return &Entry{Logger: l} }

// WithFields returns an entry with fs added to e's fields.
func (e *Entry) WithFields(fs Fields) *Entry {
	all := make(Fields, len(e.fields)+len(fs))
	for k, v := range e.fields {
		all[k] = v
	}
	for k, v := range fs {
		all[k] = v
	}
	return &Entry{Logger: e.Logger, fields: all}
}

func (e *Entry) WithField(key string, value any) *Entry { return e.WithFields(Fields{key: value}) }

// WithError adds the field error.
func (e *Entry) WithError(err error) *Entry { return e.WithField("error", err) }

func (e *Entry) Debug(args ...any)                 { e.log(DebugLevel, fmt.Sprint(args...)) }
func (e *Entry) Debugf(format string, args ...any) { e.logf(DebugLevel, format, args) }
func (e *Entry) Info(args ...any)                  { e.log(InfoLevel, fmt.Sprint(args...)) }
func (e *Entry) Infof(format string, args ...any)  { e.logf(InfoLevel, format, args) }
func (e *Entry) Warn(args ...any)                  { e.log(WarnLevel, fmt.Sprint(args...)) }
func (e *Entry) Warnf(format string, args ...any)  { e.logf(WarnLevel, format, args) }
func (e *Entry) Error(args ...any)                 { e.log(ErrorLevel, fmt.Sprint(args...)) }
func (e *Entry) Errorf(format string, args ...any) { e.logf(ErrorLevel, format, args) }

func (e *Entry) logf(v Level, format string, args []any) {
	if e.Logger.IsLevelEnabled(v) {
		e.log(v, fmt.Sprintf(format, args...))
	}
}

func (e *Entry) log(v Level, msg string) {
	l := e.Logger
	if !l.IsLevelEnabled(v) {
		return
	}
	var b strings.Builder
	b.WriteString("level=")
	b.WriteString(v.String())
	b.WriteString(" msg=")
	b.WriteString(quote(msg))
	keys := make([]string, 0, len(e.fields))
	for k := range e.fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteByte(' ')
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(quote(text(e.fields[k])))
	}
	b.WriteByte('\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.out, b.String())
}

func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case error:
		if x == nil {
			return "<nil>"
		}
		return x.Error()
	}
	return fmt.Sprint(v)
}

// quote leaves a value bare when it is one plain word, else quotes it as
// Go does, so a line is one line whatever the text holds.
func quote(s string) string {
	for _, c := range s {
		plain := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.ContainsRune("-._/@^+:", c)
		if !plain {
			return strconv.Quote(s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}
