// Package version holds the build's version string, set by the linker.
package version

// Version is replaced at link time with -X; "dev" marks an untagged build.
var Version = "dev"
