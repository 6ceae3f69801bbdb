package uci

import "fmt"

// ParseError is a config file the parser refuses, located by file and line,
// with the fix a person should make.
type ParseError struct {
	File string
	Line int // 0 when the file as a whole is refused
	Msg  string
	Fix  string
}

func (e *ParseError) Error() string {
	if e.Line == 0 { // the file as a whole
		return fmt.Sprintf("%s: %s — %s", e.File, e.Msg, e.Fix)
	}
	if e.Fix == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s — %s", e.File, e.Line, e.Msg, e.Fix)
}
