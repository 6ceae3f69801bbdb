package engine

import (
	"sort"
	"time"
)

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
