//go:build libuci

package uci

import (
	"math/rand/v2"
	"strings"
)

// gen writes random, mostly valid UCI files: every quoting kind, escapes,
// comments anywhere, empty values, lists, anonymous and reopened sections,
// package lines, CRLF, tabs, blanks, ';', continuations, no final newline,
// and now and then a mistake.
type gen struct {
	r     *rand.Rand
	crlf  bool
	types map[string]string // section name -> type it was declared with
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }
func (g *gen) pick(xs ...string) string {
	return xs[g.r.IntN(len(xs))]
}

func (g *gen) eol() string {
	if g.crlf || g.chance(0.02) {
		return "\r\n"
	}
	return "\n"
}

func (g *gen) blank() string {
	return g.pick(" ", " ", "\t", "  ", " \t", "\t\t")
}

func (g *gen) indent() string {
	return g.pick("", "\t", "\t", "  ", " \t", "\t\t")
}

// bareChars are what an unquoted word is mostly made of.
const bareChars = "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_./:@-+,[]=%!$*"

func (g *gen) bare(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteByte(bareChars[g.r.IntN(len(bareChars))])
	}
	return b.String()
}

// text is the content of a value: what a quoted part may hold.
func (g *gen) text() string {
	var b strings.Builder
	for n := g.r.IntN(10); n > 0; n-- {
		switch g.r.IntN(14) {
		case 0:
			b.WriteString(" ")
		case 1:
			b.WriteString("\t")
		case 2:
			b.WriteString("#")
		case 3:
			b.WriteString(";")
		case 4:
			b.WriteString("\n")
		case 5:
			b.WriteString("\r")
		case 6:
			b.WriteString("\\")
		case 7:
			b.WriteString("é€")
		case 8:
			b.WriteString("$x")
		default:
			b.WriteString(g.bare(1 + g.r.IntN(4)))
		}
	}
	return b.String()
}

// value writes one value argument and returns its text (possibly empty:
// no value at all).
func (g *gen) value() string {
	parts := 1
	if g.chance(0.15) {
		parts = 2 + g.r.IntN(2)
	}
	var b strings.Builder
	for i := 0; i < parts; i++ {
		switch g.r.IntN(12) {
		case 0, 1, 2: // bare, maybe with escapes
			w := g.bare(1 + g.r.IntN(8))
			if g.chance(0.2) {
				w += g.pick(`\ `, `\'`, `\"`, `\\`, `\#`, `\;`, `\n`) + g.bare(2)
			}
			b.WriteString(w)
		case 3, 4, 5: // single quotes: nothing escapes
			b.WriteString("'" + strings.ReplaceAll(g.text(), "'", "") + "'")
		case 6, 7: // double quotes: backslash takes the next character
			t := g.text()
			t = strings.ReplaceAll(t, `\`, `\\`)
			t = strings.ReplaceAll(t, `"`, `\"`)
			if g.chance(0.3) {
				t += g.pick(`\"`, `\\`, `\n`, `\t`, `\'`, `\#`)
			}
			b.WriteString(`"` + t + `"`)
		case 8: // as uci export writes a quote
			b.WriteString(`'it'\''s'`)
		case 9: // empty
			b.WriteString(g.pick("''", `""`, "''", ""))
		case 10: // a backslash continuation inside a bare word
			b.WriteString(g.bare(2) + "\\" + g.eol() + g.bare(2))
		case 11:
			b.WriteString(g.pick("1", "0", "ACCEPT", "REJECT", "lan", "wan", "br-lan", "192.168.1.1/24"))
		}
	}
	return b.String()
}

func (g *gen) optName() string {
	if g.chance(0.005) {
		return g.pick("bad-name", "a.b", "x y", "'q'", `"p"`, "p\\\nq", "é")
	}
	return g.pick("p", "q", "r", "name", "network", "target", "enabled", "a_b", "X9", "p")
}

func (g *gen) secName() string {
	if g.chance(0.01) {
		return g.pick("a-b", "x.y", "'a b'", "@x[0]")
	}
	return g.pick("lan", "wan", "x", "y", "r1", "main", "cfg01b606", "cfg02dc81", "''", `""`, "'lan'", `"wan"`, "l\\\nan")
}

func (g *gen) secType() string {
	if g.chance(0.01) {
		return g.pick("'a b'", "''", "é", "a\\\nb")
	}
	return g.pick("zone", "rule", "defaults", "a", "b", "include", "x-y", "t:y", "t.y", `"a'b"`, "'zone'", "forwarding")
}

// trailer is what may follow a statement on its line.
func (g *gen) trailer() string {
	switch g.r.IntN(100) {
	case 0, 1:
		return g.blank() + "# " + g.text()
	case 2:
		return "#glued"
	case 3:
		return g.blank()
	case 4:
		return "; option z '1'"
	}
	if g.chance(0.01) { // mistakes: libuci refuses each
		return g.pick(";", " \\", g.blank()+"extra")
	}
	return ""
}

func (g *gen) statement() string {
	var b strings.Builder
	b.WriteString(g.indent())
	list := g.chance(0.3)
	switch {
	case list && g.chance(0.2):
		b.WriteString("l")
	case list:
		b.WriteString("list")
	case g.chance(0.15):
		b.WriteString("o")
	default:
		b.WriteString("option")
	}
	b.WriteString(g.blank() + g.optName())
	if v := g.value(); v != "" || g.chance(0.5) {
		b.WriteString(g.blank() + v)
	}
	b.WriteString(g.trailer())
	return b.String()
}

func (g *gen) config() string {
	var b strings.Builder
	b.WriteString(g.indent())
	b.WriteString(g.pick("config", "config", "config", "c"))
	typ := g.secType()
	if !g.chance(0.55) {
		b.WriteString(g.blank() + typ)
	} else {
		// a name reopens its section, mostly with the same type
		name := g.secName()
		key := strings.NewReplacer("'", "", `"`, "", "\\\n", "").Replace(name)
		if t, ok := g.types[key]; ok && !g.chance(0.05) {
			typ = t
		}
		g.types[key] = typ
		b.WriteString(g.blank() + typ + g.blank() + name)
	}
	b.WriteString(g.trailer())
	return b.String()
}

func (g *gen) filler() string {
	switch g.r.IntN(6) {
	case 0:
		return ""
	case 1:
		return g.blank()
	case 2:
		return g.indent() + "# " + g.text()
	case 3:
		return "#config zone 'commented'"
	case 4:
		return "package " + g.pick("firewall", "x", "a-b", "'p'")
	}
	return g.indent() + "#"
}

// file is one whole config file.
func (g *gen) file() []byte {
	g.crlf = g.chance(0.1)
	g.types = map[string]string{}
	var lines []string
	if g.chance(0.03) {
		lines = append(lines, g.statement()) // before any section
	}
	for s := g.r.IntN(7); s >= 0; s-- {
		for g.chance(0.3) {
			lines = append(lines, g.filler())
		}
		lines = append(lines, g.config())
		for o := g.r.IntN(7); o > 0; o-- {
			if g.chance(0.15) {
				lines = append(lines, g.filler())
			}
			lines = append(lines, g.statement())
		}
	}
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(l)
		if i < len(lines)-1 || g.chance(0.85) {
			b.WriteString(g.eol())
		}
	}
	return []byte(b.String())
}

// mutateBytes are what a mutation inserts or writes over a byte.
const mutateBytes = "'\"\\#; \t\n\r=.@[]-_abcopl0\x01\x7f\xc3"

// mutate changes a few bytes of a file: inserted, deleted, replaced,
// lines repeated or dropped.
func (g *gen) mutate(data []byte) []byte {
	out := append([]byte(nil), data...)
	for n := 1 + g.r.IntN(3); n > 0; n-- {
		i := 0
		if len(out) > 0 {
			i = g.r.IntN(len(out) + 1)
		}
		c := mutateBytes[g.r.IntN(len(mutateBytes))]
		if g.chance(0.005) {
			c = 0 // a NUL now and then: a documented refusal
		}
		switch g.r.IntN(5) {
		case 0, 1:
			out = append(out[:i], append([]byte{c}, out[i:]...)...)
		case 2:
			if i < len(out) {
				out = append(out[:i], out[i+1:]...)
			}
		case 3:
			if i < len(out) {
				out[i] = c
			}
		case 4:
			lines := strings.SplitAfter(string(out), "\n")
			k := g.r.IntN(len(lines))
			if g.chance(0.5) {
				lines = append(lines[:k], lines[k+1:]...)
			} else {
				lines = append(lines[:k], append([]string{lines[k]}, lines[k:]...)...)
			}
			out = []byte(strings.Join(lines, ""))
		}
	}
	return out
}

// setValue is a value for `uci set`: anything uci_validate_text allows.
func (g *gen) setValue() string {
	switch g.r.IntN(8) {
	case 0:
		return g.pick("0", "1", "ACCEPT", "DROP")
	case 1:
		return "it's \"quoted\" \\ # ; $x"
	case 2:
		return "two\nlines"
	case 3:
		return "cr\rlf\r\n"
	case 4:
		return " spaced\t"
	case 5:
		return "'"
	}
	v := g.text()
	if v == "" {
		v = "v"
	}
	return v
}

// delta writes a random staged-changes file for package pkg: the forms
// uci_save writes, and what editors and other programs leave.
func (g *gen) delta(pkg string, sections []string) []byte {
	var b strings.Builder
	sec := func() string {
		if len(sections) == 0 || g.chance(0.1) {
			return g.pick("x", "cfg01b606", "@a[0]", "bad-name", "")
		}
		return sections[g.r.IntN(len(sections))]
	}
	for n := g.r.IntN(8); n >= 0; n-- {
		p := pkg
		if g.chance(0.05) {
			p = g.pick("other", pkgPrefix, "", "a-b")
		}
		var line string
		switch g.r.IntN(9) {
		case 0:
			line = p + "." + sec() + "." + g.optName() + "=" + quote(g.setValue())
		case 1:
			line = "-" + p + "." + sec() + g.pick("", ".p", ".network", ".q='1'")
		case 2:
			line = "+" + p + "." + sec() + "=" + quote(g.pick("rule", "zone", ""))
		case 3:
			line = "|" + p + "." + sec() + g.pick(".network", ".p", "") + "=" + quote(g.setValue())
		case 4:
			line = "~" + p + "." + sec() + g.pick(".network", ".p", "") + "=" + quote(g.setValue())
		case 5:
			line = "@" + p + "." + sec() + g.pick("", ".p") + "=" + quote(g.pick("newname", "bad-name", ""))
		case 6:
			line = "^" + p + "." + sec() + g.pick("", ".p") + "=" + quote(g.pick("0", "3", "x"))
		case 7:
			line = p + "." + sec() + "." + g.optName() + "=" + g.value()
		case 8:
			line = g.pick("", "# comment", "   ", p, p+".x.y.z.w='1'", p+".x.p", `"`+p+`.x.p=1"`)
		}
		if g.chance(0.15) {
			line = g.blank() + line
		}
		if g.chance(0.15) {
			line += g.pick(" ", "\t", "\r", " # c", " extra", ";", "'")
		}
		b.WriteString(line)
		if n > 0 || g.chance(0.85) {
			b.WriteString(g.pick("\n", "\n", "\n", "\n", "\r\n"))
		}
	}
	out := []byte(b.String())
	if g.chance(0.2) {
		out = g.mutate(out)
	}
	return out
}
