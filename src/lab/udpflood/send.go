package main

import (
	"fmt"
	"net"
	"time"
)

// pacer says how many datagrams are due at a moment so that the rate stays
// fixed on average however coarse the sleeps are; a backlog longer than
// maxBurst is dropped rather than sent at once.
type pacer struct {
	pps      float64
	start    time.Time
	released uint64
}

const maxBurst = 100 * time.Millisecond

func (p *pacer) due(now time.Time) uint64 {
	want := uint64(now.Sub(p.start).Seconds() * p.pps)
	if burst := uint64(maxBurst.Seconds() * p.pps); want > p.released+burst {
		p.released = want - burst
	}
	n := want - p.released
	p.released = want
	return n
}

func runSend(args []string) error {
	fs := newFlags("send")
	from := fs.String("from", "", "source IP:PORT (fixed)")
	to := fs.String("to", "", "destination IP:PORT (fixed)")
	pps := fs.Int("pps", 10000, "datagrams per second")
	seconds := fs.Float64("seconds", 10, "how long to send")
	count := fs.Uint64("count", 0, "stop after this many datagrams (0: only the time bounds)")
	size := fs.Int("size", 1200, "UDP payload bytes")
	_ = fs.Parse(args)

	src, err := labAddrPort("from", *from)
	if err != nil {
		return err
	}
	dst, err := labAddrPort("to", *to)
	if err != nil {
		return err
	}
	d, err := runFor(*seconds)
	if err != nil {
		return err
	}
	if *pps < 1 || *pps > maxPPS {
		return fmt.Errorf("-pps %d: want 1 to %d", *pps, maxPPS)
	}
	if *size < 1 || *size > maxSize {
		return fmt.Errorf("-size %d: want 1 to %d", *size, maxSize)
	}
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(src))
	if err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	defer conn.Close()
	to4 := net.UDPAddrFromAddrPort(dst)
	payload := make([]byte, *size)

	var sent, failed uint64
	p := pacer{pps: float64(*pps), start: time.Now()}
	end := p.start.Add(d)
	for now := time.Now(); now.Before(end); now = time.Now() {
		for n := p.due(now); n > 0; n-- {
			if *count > 0 && sent >= *count {
				break
			}
			if _, err := conn.WriteToUDP(payload, to4); err != nil {
				failed++ // ENOBUFS or an ICMP error from an earlier datagram: the rate, not the run, is what matters
				continue
			}
			sent++
		}
		if *count > 0 && sent >= *count {
			break
		}
		time.Sleep(time.Millisecond)
	}
	fmt.Printf("sent %d failed %d seconds %.1f\n", sent, failed, time.Since(p.start).Seconds())
	return nil
}
