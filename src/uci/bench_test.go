package uci

import (
	"fmt"
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

// manySections is a file of n sections, alternately anonymous and named,
// each with two options: the shape of a firewall with n rules.
func manySections(n int) []byte {
	var b []byte
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			b = append(b, "config rule\n"...)
		} else {
			b = fmt.Appendf(b, "config rule 'r%d'\n", i)
		}
		b = fmt.Appendf(b, "\toption name 'rule %d'\n\toption target 'ACCEPT'\n\n", i)
	}
	return b
}

// Parse and Set must stay linear in the number of sections.
func BenchmarkParse100kSections(b *testing.B) {
	data := manySections(100_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Parse("/etc/config/firewall", data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSet100kSections(b *testing.B) {
	f, err := Parse("/etc/config/firewall", manySections(100_000))
	if err != nil {
		b.Fatal(err)
	}
	values := []string{"DROP", "REJECT"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := f.Set("@rule[-1]", "target", values[i%2]); err != nil {
			b.Fatal(err)
		}
	}
}

// hugeValue is one option whose quoted value is size bytes long, on lines
// of 100 bytes (a pasted blob).
func hugeValue(size int) []byte {
	b := append(make([]byte, 0, size+64), "config a 'x'\n\toption blob '"...)
	for i := 0; i < size; i++ {
		if i%100 == 99 {
			b = append(b, '\n')
		} else {
			b = append(b, 'a'+byte(i%26))
		}
	}
	return append(b, "'\n"...)
}

// A huge value must cost a bounded amount of memory: 20 MB is refused at
// the statement limit, 50 MB at the file limit.
func BenchmarkParseHugeValue(b *testing.B) {
	for _, mb := range []int{20, 50} {
		data := hugeValue(mb << 20)
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Parse("/etc/config/x", data); err == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}
