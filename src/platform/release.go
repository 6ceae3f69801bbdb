package platform

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// ParseOpenWrtRelease reads /etc/openwrt_release: shell assignments such as
// DISTRIB_TARGET='ramips/mt7621'. It keeps every line it understands and
// reports the first one it does not (by line number), so one bad line never
// hides the rest of the file.
func ParseOpenWrtRelease(data []byte) (map[string]string, error) {
	values := map[string]string{}
	var firstErr error
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), len(data)+1)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		text = strings.TrimPrefix(text, "export ")
		key, raw, ok := strings.Cut(text, "=")
		if !ok || !isShellName(key) {
			if firstErr == nil {
				firstErr = fmt.Errorf("line %d: %q is not a KEY='value' assignment", line, clip(text))
			}
			continue
		}
		value, err := unquoteShellWord(raw)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("line %d: %s: %v", line, key, err)
			}
			continue
		}
		values[key] = value
	}
	if err := sc.Err(); err != nil && firstErr == nil {
		firstErr = fmt.Errorf("line %d: %v", line+1, err)
	}
	return values, firstErr
}

// isShellName reports whether s is a valid shell variable name.
func isShellName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// unquoteShellWord undoes the shell quoting of one word: 'single' quotes are
// literal, "double" quotes honour \" \\ \$ \`, and unquoted text honours a
// backslash before any character. Quoted pieces may be concatenated, as in
// 'it'"'"'s', which is how shell scripts write a single quote.
func unquoteShellWord(raw string) (string, error) {
	var out strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case '\'':
			end := strings.IndexByte(raw[i+1:], '\'')
			if end < 0 {
				return "", fmt.Errorf("single quote opened at column %d is never closed", i+1)
			}
			out.WriteString(raw[i+1 : i+1+end])
			i += end + 1
		case '"':
			j := i + 1
			for ; j < len(raw) && raw[j] != '"'; j++ {
				if raw[j] == '\\' && j+1 < len(raw) && strings.IndexByte("\"\\$`", raw[j+1]) >= 0 {
					j++
				}
				out.WriteByte(raw[j])
			}
			if j >= len(raw) {
				return "", fmt.Errorf("double quote opened at column %d is never closed", i+1)
			}
			i = j
		case '\\':
			if i+1 >= len(raw) {
				return "", fmt.Errorf("trailing backslash")
			}
			i++
			out.WriteByte(raw[i])
		case ' ', '\t':
			rest := strings.TrimSpace(raw[i:])
			if rest == "" || strings.HasPrefix(rest, "#") {
				return out.String(), nil
			}
			return "", fmt.Errorf("unquoted space before %q: quote the whole value", clip(rest))
		default:
			out.WriteByte(c)
		}
	}
	return out.String(), nil
}

// clip shortens text quoted in error messages.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
