//go:build !linux

package observe

import "errors"

// RootQdiscs needs rtnetlink, which only Linux has.
func RootQdiscs(netns int) (map[int]string, error) {
	return nil, errors.New("listing qdiscs is implemented on Linux only")
}
