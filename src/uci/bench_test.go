package uci

import (
	"os"
	"testing"
)

func BenchmarkParseFirewall(b *testing.B) {
	data, err := os.ReadFile("testdata/firewall-24.10-committed")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := Parse("/etc/config/firewall", data); err != nil {
			b.Fatal(err)
		}
	}
}

// Set re-parses the whole file to check its edit; this is its cost.
func BenchmarkSetFirewall(b *testing.B) {
	data, err := os.ReadFile("testdata/firewall-24.10-committed")
	if err != nil {
		b.Fatal(err)
	}
	f, err := Parse("/etc/config/firewall", data)
	if err != nil {
		b.Fatal(err)
	}
	values := []string{"0", "1"}
	for i := 0; i < b.N; i++ {
		if err := f.Set("@defaults[0]", "flow_offloading_hw", values[i%2]); err != nil {
			b.Fatal(err)
		}
	}
}
