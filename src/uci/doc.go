// Package uci reads and writes OpenWrt UCI config files, keeping everything
// it does not change.
//
// The parser follows libuci's own (file.c) statement by statement, so a file
// means here what it means to `uci show`: the same sections, values and
// auto-generated names of anonymous sections (cfgXXYYYY). A File keeps the
// text it was parsed from; Set edits that text in place (one value token, or
// one new line) and Bytes returns it, so every comment, blank line, quoting
// style and order we did not touch survives byte for byte.
package uci
