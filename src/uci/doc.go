// Package uci reads and writes OpenWrt UCI config files, keeping everything
// it does not change.
//
// The parser is libuci's (file.c) ported statement by statement, so a file
// means here what it means to `uci show` and to the firewall's loader:
//
//   - package, config TYPE ['NAME'], option NAME VALUE, list NAME VALUE, and
//     their one-letter forms p, c, o, l;
//   - values unquoted, in '...' (no escapes) or "..." (backslash takes the
//     next character literally), parts concatenated ('a'"b"c), quoted values
//     running over several lines, a backslash at the end of a line joining
//     the next one;
//   - '#' comments, whole-line or trailing, blank lines, tabs, CRLF;
//   - libuci's merging: a repeated option replaces the earlier one where it
//     stood, a list after an option turns it into a list where it stood (and
//     an option after a list replaces the list), an empty value (empty quotes,
//     or no value at all) changes nothing, a repeated `config TYPE NAME` reopens
//     that section;
//   - strict mode errors (too many arguments, invalid names, a reopened
//     section of another type), as `uci` itself reports them, on the line
//     libuci names (the last one it had read, so a backslash continuation
//     counts), with the fix;
//   - ';' as libuci handles it, quirks included: after a quoted word it
//     starts another statement, glued to an unquoted word it silently ends
//     the line, and at the end of a line it is an error.
//
// Where it deliberately differs from libuci: an error on a last line
// without a final newline is named on that line (libuci counts one line
// less); an unterminated quote is named on the line it opened (libuci names
// the end of the file); a NUL byte is refused (libuci's fgets-based reader
// silently drops text after it); a statement over MaxStatement or a file
// over MaxFileSize is refused (libuci has no limit).
//
// Anonymous sections get libuci's names: "cfg", the section's position
// among all sections of the file counting from 1 (two or more hex digits),
// and the low 16 bits of the djb hash of its type, e.g. cfg01e63d for the
// first `config defaults` of /etc/config/firewall.
//
// A File keeps the text it was parsed from. Set edits that text in place
// (one value token, or one new line) and re-parses it to prove that only
// the one option changed; Bytes returns it, so comments, blank lines,
// quoting and order survive byte for byte. Save replaces the file
// atomically and never touches staged changes (the uci command's in
// /tmp/.uci, LuCI's in rpcd's /var/run/rpcd/uci-<session>),
// which Staged reads as libuci does (its delta format: `+` add, `-` remove,
// `@` rename, `^` reorder, `|` list add, `~` list delete, no prefix for set;
// a quoted value may span lines; a line with anything after its change,
// even a blank or a CRLF's \r, is ignored). A config that is a symlink
// stays one: Save replaces the file it points to, as libuci's commit does.
//
// The differential test (libuci_test.go, `make test-uci-libuci`) checks
// all of this against the real libuci and uci command.
package uci
