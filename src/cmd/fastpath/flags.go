package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// flagSet parses the CLI's flags as the standard library's flag package
// does (-name value, -name=value, --name, booleans alone, "--" ending the
// flags, -h and -help asking for the usage) and prints the same usage
// text. The package itself, with the sort it instantiates for its usage,
// costs the mips binary about 20 KB of text; the CLI needs strings, ints
// and booleans only.
type flagSet struct {
	name   string
	flags  map[string]*cliFlag
	args   []string
	output io.Writer // nil: stderr
	Usage  func()    // "Usage of NAME:" and the flags, unless replaced
}

type cliFlag struct {
	name, usage, defValue string
	set                   func(string) error
	kind                  string // "bool", "int" or "string"
}

// errHelp is what Parse answers to -h or -help.
var errHelp = errors.New("flag: help requested")

func newFlagSet(name string) *flagSet {
	f := &flagSet{name: name, flags: map[string]*cliFlag{}}
	f.Usage = f.defaultUsage
	return f
}

func (f *flagSet) Name() string { return f.name }
func (f *flagSet) Args() []string {
	return f.args
}

func (f *flagSet) Output() io.Writer {
	if f.output == nil {
		return os.Stderr
	}
	return f.output
}

func (f *flagSet) define(name, usage, def, kind string, set func(string) error) {
	f.flags[name] = &cliFlag{name: name, usage: usage, defValue: def, kind: kind, set: set}
}

func (f *flagSet) StringVar(p *string, name, value, usage string) {
	*p = value
	f.define(name, usage, value, "string", func(s string) error { *p = s; return nil })
}

func (f *flagSet) String(name, value, usage string) *string {
	p := new(string)
	f.StringVar(p, name, value, usage)
	return p
}

func (f *flagSet) BoolVar(p *bool, name string, value bool, usage string) {
	*p = value
	f.define(name, usage, strconv.FormatBool(value), "bool", func(s string) error {
		v, err := strconv.ParseBool(s)
		if err != nil {
			return errors.New("parse error")
		}
		*p = v
		return nil
	})
}

func (f *flagSet) IntVar(p *int, name string, value int, usage string) {
	*p = value
	f.define(name, usage, strconv.Itoa(value), "int", func(s string) error {
		v, err := strconv.ParseInt(s, 0, strconv.IntSize)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return errors.New("value out of range")
			}
			return errors.New("parse error")
		}
		*p = int(v)
		return nil
	})
}

func (f *flagSet) Int(name string, value int, usage string) *int {
	p := new(int)
	f.IntVar(p, name, value, usage)
	return p
}

// Parse reads flags from the front of args up to the first argument that
// is not one; Args holds the rest. An error has been printed with the
// usage already, as the flag package's ContinueOnError does.
func (f *flagSet) Parse(args []string) error {
	f.args = args
	for {
		done, err := f.parseOne()
		if err == errHelp {
			f.usage()
			return err
		}
		if err != nil {
			fmt.Fprintln(f.Output(), err)
			f.usage()
			return err
		}
		if done {
			return nil
		}
	}
}

func (f *flagSet) parseOne() (done bool, err error) {
	if len(f.args) == 0 {
		return true, nil
	}
	s := f.args[0]
	if len(s) < 2 || s[0] != '-' {
		return true, nil
	}
	minuses := 1
	if s[1] == '-' {
		minuses++
		if len(s) == 2 { // "--": the flags end here
			f.args = f.args[1:]
			return true, nil
		}
	}
	name := s[minuses:]
	if len(name) == 0 || name[0] == '-' || name[0] == '=' {
		return false, fmt.Errorf("bad flag syntax: %s", s)
	}
	f.args = f.args[1:]
	value, hasValue := "", false
	if i := strings.IndexByte(name, '='); i >= 0 {
		name, value, hasValue = name[:i], name[i+1:], true
	}
	fl, ok := f.flags[name]
	if !ok {
		if name == "help" || name == "h" {
			return false, errHelp
		}
		return false, fmt.Errorf("flag provided but not defined: -%s", name)
	}
	if fl.kind == "bool" {
		if !hasValue {
			value = "true"
		}
		if err := fl.set(value); err != nil {
			return false, fmt.Errorf("invalid boolean value %q for -%s: %v", value, name, err)
		}
		return false, nil
	}
	if !hasValue {
		if len(f.args) == 0 {
			return false, fmt.Errorf("flag needs an argument: -%s", name)
		}
		value, f.args = f.args[0], f.args[1:]
	}
	if err := fl.set(value); err != nil {
		return false, fmt.Errorf("invalid value %q for flag -%s: %v", value, name, err)
	}
	return false, nil
}

func (f *flagSet) usage() {
	if f.Usage == nil {
		f.defaultUsage()
		return
	}
	f.Usage()
}

func (f *flagSet) defaultUsage() {
	fmt.Fprintf(f.Output(), "Usage of %s:\n", f.name)
	f.PrintDefaults()
}

// PrintDefaults writes each flag, by name, as the flag package does: its
// usage, the `quoted` word of it as the value's name, and a default that
// is not the zero value.
func (f *flagSet) PrintDefaults() {
	names := make([]string, 0, len(f.flags))
	for n := range f.flags {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fl := f.flags[n]
		var b strings.Builder
		b.WriteString("  -" + fl.name)
		valueName, usage := unquoteUsage(fl)
		if valueName != "" {
			b.WriteString(" " + valueName)
		}
		if b.Len() <= 4 {
			b.WriteString("\t")
		} else {
			b.WriteString("\n    \t")
		}
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		if zero := map[string]string{"bool": "false", "int": "0", "string": ""}[fl.kind]; fl.defValue != zero {
			if fl.kind == "string" {
				b.WriteString(" (default " + strconv.Quote(fl.defValue) + ")")
			} else {
				b.WriteString(" (default " + fl.defValue + ")")
			}
		}
		fmt.Fprint(f.Output(), b.String(), "\n")
	}
}

// unquoteUsage takes the name of a flag's value from the first `quoted`
// word of its usage, else from its type.
func unquoteUsage(fl *cliFlag) (name, usage string) {
	usage = fl.usage
	if i := strings.IndexByte(usage, '`'); i >= 0 {
		if j := strings.IndexByte(usage[i+1:], '`'); j >= 0 {
			j += i + 1
			return usage[i+1 : j], usage[:i] + usage[i+1:j] + usage[j+1:]
		}
	}
	if fl.kind == "bool" {
		return "", usage
	}
	return fl.kind, usage
}
