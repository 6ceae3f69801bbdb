package uci

import (
	"errors"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		msg, fix string // substrings
	}{
		{"unterminated single quote names the option and the line it opened on",
			"config rule\n\toption name 'Allow-Ping\n\toption src wan\n", 2,
			"unterminated single quote in option 'name'", "close it"},
		{"unterminated double quote", "config a x\n\n\toption v \"abc\n", 3,
			"unterminated double quote in option 'v'", `close it with "`},
		{"unknown command", "config a x\n\toptoin v 1\n", 2,
			`invalid command "optoin"`, "package, config, option or list"},
		{"option before any section", "# c\noption v 1\n", 2,
			"option before the first section", "add a config TYPE line above it"},
		{"config without a type", "config\n", 1,
			"config without a section type", "config TYPE"},
		{"config without a type at end of file", "config", 1,
			"config without a section type", "config TYPE"},
		{"option without a name", "config a x\noption\n", 2,
			"option without a name", "option NAME"},
		{"too many arguments", "config a x\n\toption v hello world\n", 2,
			`too many arguments for option 'v' (unexpected "world")`, "option v 'a b'"},
		{"invalid option name", "config a x\n\toption my-opt 1\n", 2,
			`invalid option name "my-opt"`, "'my_opt'"},
		{"invalid section name", "config a 'x.y'\n", 1,
			`invalid section name "x.y"`, "'x_y'"},
		{"section type with a blank", "config 'a b' x\n", 1,
			`invalid section type "a b"`, "without spaces"},
		{"same name, other type", "config a x\nconfig b x\n", 2,
			`section "x" is declared again with type "b"; line 1 declared it as "a"`, "rename one"},
		{"too many arguments for config", "config a x y\n", 1,
			`too many arguments for config (unexpected "y")`, "config TYPE ['NAME']"},
		{"trailing ';' leaves a newline that is not a command", "config a x\noption v '1';\n", 2,
			"invalid command", ""},
		{"NUL byte", "config a x\n\x00\n", 2, "NUL byte", "restore"},
		// libuci names the line it had read last when it found the error
		// (pctx->line): with a backslash continuation, the joined line.
		{"argument joined by a trailing backslash", "config a x\n\toption p '1' \\\nlist q 2\n", 3,
			`too many arguments for option 'p' (unexpected "list")`, ""},
		{"invalid name after a continuation", "config a x\n\toption \\\np-q 1\n", 3,
			`invalid option name "p-q"`, ""},
		{"continuation then a blank: the name is missing", "config a x\n\toption \\\n p-q 1\n", 3,
			"option without a name", ""},
		{"section of another type, continued", "config a x\nconfig \\\nb x\n", 3,
			`section "x" is declared again with type "b"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("/etc/config/firewall", []byte(tt.in))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *ParseError", err)
			}
			if pe.File != "/etc/config/firewall" || pe.Line != tt.line {
				t.Errorf("at %s:%d, want /etc/config/firewall:%d (%v)", pe.File, pe.Line, tt.line, err)
			}
			if !strings.Contains(pe.Msg, tt.msg) || !strings.Contains(pe.Fix, tt.fix) {
				t.Errorf("got %q / %q, want %q / %q", pe.Msg, pe.Fix, tt.msg, tt.fix)
			}
		})
	}
}

func TestParseErrorText(t *testing.T) {
	_, err := Parse("/etc/config/firewall", []byte("config rule\n\toption name 'x\n"))
	want := "/etc/config/firewall:2: unterminated single quote in option 'name', opened on this line — close it with ' (inside single quotes write a literal ' as '\\'')"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
