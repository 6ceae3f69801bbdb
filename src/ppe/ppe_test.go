package ppe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Lines as mtk_ppe_debugfs_foe_show prints them (Linux 6.6, MT7621: no
// accounting, so packets=0 bytes=0), an MT7986 line with its counters, and
// MediaTek SDK's variant with " ppe=N".
const table = `00312 BND IPv4 5T orig=192.168.1.120:50412->198.51.100.7:443 new=203.0.113.2:50412->198.51.100.7:443 eth=e4:fa:c4:3a:10:02->02:00:5e:10:00:01 etype=0000 vlan=0,0 ib1=2000e5a1 ib2=007f2340 packets=0 bytes=0
0174a UNB IPv4 5T orig=198.51.100.7:443->203.0.113.2:50412 new=198.51.100.7:443->192.168.1.120:50412 eth=00:00:00:00:00:00->00:00:00:00:00:00 etype=0000 vlan=0,0 ib1=1000e5a1 ib2=00000000 packets=0 bytes=0
04c27 BND IPv6 5T orig=fd5b:0c2e:8a41:0000:0000:0000:0000:0120:50414->2001:0db8:0000:0000:0000:0000:0000:0007:443 eth=e4:fa:c4:3a:10:02->02:00:5e:10:00:01 etype=0000 vlan=0,0 ib1=2a00e5a2 ib2=007f2340 packets=0 bytes=0
01000 BND DS-LITE orig=10.0.0.2:1000->192.0.2.1:80 new=10.0.0.2:1000->192.0.2.1:80 eth=e4:fa:c4:3a:10:02->02:00:5e:10:00:01 etype=86dd vlan=0,0 ib1=2600e5a2 ib2=007f2340 packets=0 bytes=0
01001 BND     6RD ppe=1 orig=fd00:0000:0000:0000:0000:0000:0000:0001->2001:0db8:0000:0000:0000:0000:0000:0007 eth=e4:fa:c4:3a:10:02->02:00:5e:10:00:01 etype=0800 vlan=0,0 ib1=2a00e5a2 ib2=007f2340 packets=12 bytes=9000
`

func TestParseCountsBoundEntriesByType(t *testing.T) {
	got := Parse("ppe0", strings.NewReader(table))
	if got.Error != "" {
		t.Fatalf("error %q", got.Error)
	}
	if got.Bound != 4 {
		t.Errorf("bound = %d, want 4 (the UNB entry forwards nothing)", got.Bound)
	}
	if got.IPv6 != 2 {
		t.Errorf("ipv6 = %d, want 2 (IPv6 5T and 6RD)", got.IPv6)
	}
	if !got.Counted || got.Bytes != 9000 {
		t.Errorf("counted %v bytes %d, want true and 9000", got.Counted, got.Bytes)
	}
}

func TestParseBeforeAccounting(t *testing.T) {
	// Before Linux 6.4 a line ends at ib2=: no counters at all.
	got := Parse("ppe0", strings.NewReader("00312 BND IPv4 5T orig=192.168.1.120:50412->198.51.100.7:443 new=203.0.113.2:50412->198.51.100.7:443 eth=e4:fa:c4:3a:10:02->02:00:5e:10:00:01 etype=0000 vlan=0,0 ib1=2000e5a1 ib2=007f2340\n"))
	if got.Bound != 1 || got.Counted {
		t.Errorf("bound %d counted %v, want 1 and false", got.Bound, got.Counted)
	}
}

func TestParseNamesTheBadLineAndKeepsCounting(t *testing.T) {
	got := Parse("ppe1", strings.NewReader("zz BND IPv4 5T orig=x\n00001 BND IPv4 5T bytes=x\n00002 BND IPv4 5T orig=a\n"))
	if got.Bound != 2 {
		t.Errorf("bound = %d, want 2 (a bad counter does not unbind an entry)", got.Bound)
	}
	if want := `ppe1/bind line 1: not an entry (index, state, type, fields)`; got.Error != want {
		t.Errorf("error %q, want %q", got.Error, want)
	}
}

func TestParseIsBounded(t *testing.T) {
	line := "00312 BND IPv4 5T orig=192.168.1.120:50412->198.51.100.7:443 packets=0 bytes=0\n"
	got := Parse("ppe0", strings.NewReader(strings.Repeat(line, maxLines+10)))
	if got.Bound != maxLines || !strings.Contains(got.Error, "line 16385: more lines or bytes than a PPE holds") {
		t.Errorf("bound %d error %q, want %d and a bound named", got.Bound, got.Error, maxLines)
	}
	got = Parse("ppe0", strings.NewReader(line+strings.Repeat("x", maxLine+1)+"\n"+line))
	if got.Bound != 1 || !strings.Contains(got.Error, "line 2") {
		t.Errorf("bound %d error %q, want 1 and line 2 named", got.Bound, got.Error)
	}
}

func TestReadTables(t *testing.T) {
	root := t.TempDir()
	if tables := ReadTables(root); tables != nil {
		t.Fatalf("no debugfs: %+v, want none", tables)
	}
	for _, name := range []string{"ppe0", "ppe2"} {
		dir := filepath.Join(root, "sys/kernel/debug", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "bind"), []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tables := ReadTables(root)
	if len(tables) != 2 || tables[0].Name != "ppe0" || tables[1].Name != "ppe2" || tables[1].Bound != 4 {
		t.Fatalf("tables %+v; want ppe0 and ppe2 with 4 bound each", tables)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(table)
	f.Fuzz(func(t *testing.T, s string) {
		got := Parse("ppe0", strings.NewReader(s))
		if got.Bound < 0 || got.Bound > maxLines {
			t.Fatalf("bound %d", got.Bound)
		}
	})
}
