package uci

import (
	"fmt"
	"strings"
)

// autoName is the name libuci gives the n-th section of a file when it has
// none (uci_fixup_section, called from uci_add_section before any option is
// added): "cfg", the section's position among all sections counting from 1
// as two or more hex digits, and the low 16 bits of the djb hash of its
// type. The first `config defaults` of /etc/config/firewall is cfg01e63d.
func autoName(n int, typ string) string {
	return fmt.Sprintf("cfg%02x%04x", n, djbHash(typ)%(1<<16))
}

// djbHash is libuci's djbhash seeded with 5381. Types are printable ASCII
// (validType), so C's signed or unsigned char makes no difference.
func djbHash(s string) uint32 {
	h := uint32(5381)
	for i := 0; i < len(s); i++ {
		h = h<<5 + h + uint32(s[i])
	}
	return h & 0x7fffffff
}

// validName is uci_validate_name: section and option names are letters,
// digits and _ (so shell scripts can use them).
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '_' {
			return false
		}
	}
	return true
}

// validPackage is uci_validate_package: a name, or with '-' as well.
func validPackage(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '_' && s[i] != '-' {
			return false
		}
	}
	return true
}

// validType is uci_validate_type: printable ASCII without spaces.
func validType(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 33 || s[i] > 126 {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// sanitizeName suggests a valid name for an invalid one.
func sanitizeName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if isAlnum(s[i]) {
			b.WriteByte(s[i])
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
