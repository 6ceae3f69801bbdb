package main

import (
	"testing"
	"time"
)

func TestLabAddrPortRefusesOutsideTheLab(t *testing.T) {
	for _, s := range []string{"8.8.8.8:53", "10.0.4.2:5000", "[2001:db8::1]:5000", "127.0.0.1:5000"} {
		if _, err := labAddrPort("to", s); err == nil {
			t.Errorf("labAddrPort(%q) accepted an address outside the lab", s)
		}
	}
	for _, s := range []string{"10.0.1.2:5000", "10.0.2.2:5201", "[fd00:2::2]:5201", "[::ffff:10.0.2.2]:1"} {
		if _, err := labAddrPort("to", s); err != nil {
			t.Errorf("labAddrPort(%q): %v", s, err)
		}
	}
	if _, err := labAddrPort("to", "10.0.1.2:0"); err == nil {
		t.Error("port 0 accepted: the flood must use fixed ports")
	}
}

func TestCheckSecondsBounds(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second, maxDuration + time.Second} {
		if checkSeconds(d) == nil {
			t.Errorf("checkSeconds(%v) accepted", d)
		}
	}
	if err := checkSeconds(22 * time.Second); err != nil {
		t.Errorf("checkSeconds(22s): %v", err)
	}
}

func TestPacerKeepsTheRate(t *testing.T) {
	start := time.Unix(1000, 0)
	p := pacer{pps: 1000, start: start}
	var total uint64
	for ms := 1; ms <= 2000; ms += 7 { // coarse, uneven ticks
		total += p.due(start.Add(time.Duration(ms) * time.Millisecond))
	}
	if total < 1990 || total > 2000 {
		t.Errorf("1000 pps over ~2 s released %d datagrams, want ~2000", total)
	}
}

func TestPacerDropsALongBacklog(t *testing.T) {
	start := time.Unix(1000, 0)
	p := pacer{pps: 1000, start: start}
	if n := p.due(start.Add(5 * time.Second)); n != uint64(maxBurst.Seconds()*1000) {
		t.Errorf("after a 5 s stall: %d due at once, want at most %v worth (%d)", n, maxBurst, uint64(maxBurst.Seconds()*1000))
	}
	if n := p.due(start.Add(5*time.Second + 10*time.Millisecond)); n != 10 {
		t.Errorf("10 ms after the stall: %d due, want 10", n)
	}
}

// FuzzLabAddrPort: whatever the option says, an accepted address is a lab
// address with a fixed port.
func FuzzLabAddrPort(f *testing.F) {
	for _, s := range []string{"10.0.1.2:5000", "[fd00:2::2]:5201", "8.8.8.8:53", "10.0.2.2:0", "", "[::ffff:10.0.2.2]:1", "10.0.2.2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ap, err := labAddrPort("to", s)
		if err != nil {
			return
		}
		if ap.Port() == 0 || checkLabAddr("to", ap.Addr()) != nil {
			t.Fatalf("labAddrPort(%q) = %v accepted outside the bounds", s, ap)
		}
	})
}
