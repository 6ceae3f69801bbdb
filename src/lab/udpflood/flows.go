package main

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

func runFlows(args []string) error {
	fs := newFlags("flows")
	from := fs.String("from", "", "source IP of every flow")
	basePort := fs.Int("base-port", 10000, "source port of the first flow; flow i uses base-port+i")
	flows := fs.Int("flows", 1000, "number of flows")
	to := fs.String("to", "", "destination IP:PORT (an echo)")
	seconds := fs.Float64("seconds", 30, "how long to keep the flows")
	interval := fs.Duration("interval", time.Second, "one datagram per flow every interval")
	_ = fs.Parse(args)

	srcIP, err := labAddr("from", *from)
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
	if *flows < 1 || *flows > maxFlows {
		return fmt.Errorf("-flows %d: want 1 to %d", *flows, maxFlows)
	}
	if *basePort < 1024 || *basePort+*flows > 65536 {
		return fmt.Errorf("-base-port %d with -flows %d: ports must stay within 1024..65535", *basePort, *flows)
	}
	if *interval < 10*time.Millisecond {
		return fmt.Errorf("-interval %v: want at least 10ms", *interval)
	}

	conns := make([]*net.UDPConn, *flows)
	for i := range conns {
		src := netip.AddrPortFrom(srcIP, uint16(*basePort+i))
		c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(src), net.UDPAddrFromAddrPort(dst))
		if err != nil {
			closeAll(conns[:i])
			return fmt.Errorf("flow %d from %s: %w", i, src, err)
		}
		conns[i] = c
	}
	defer closeAll(conns)

	deadline := time.Now().Add(d)
	var answers atomic.Uint64
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func(c *net.UDPConn) { // drain the answers so no socket queue fills up
			defer wg.Done()
			buf := make([]byte, 2048)
			_ = c.SetReadDeadline(deadline)
			for {
				if _, err := c.Read(buf); err != nil {
					if ne, ok := err.(net.Error); ok && ne.Timeout() {
						return
					}
					continue // ECONNREFUSED from an ICMP error: keep the flow
				}
				answers.Add(1)
			}
		}(c)
	}
	var sent uint64
	msg := []byte("fastpath lab flow")
	for round := time.Now(); round.Before(deadline); round = round.Add(*interval) {
		for _, c := range conns {
			if _, err := c.Write(msg); err == nil {
				sent++
			}
		}
		time.Sleep(time.Until(round.Add(*interval)))
	}
	wg.Wait()
	fmt.Printf("flows %d sent %d answers %d\n", len(conns), sent, answers.Load())
	return nil
}

func closeAll(conns []*net.UDPConn) {
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}
