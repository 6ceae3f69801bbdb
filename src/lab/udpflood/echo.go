package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

func runEcho(args []string) error {
	fs := newFlags("echo")
	on := fs.String("on", "", "IP:PORT to answer on")
	seconds := fs.Float64("seconds", 30, "how long to answer")
	_ = fs.Parse(args)

	ap, err := labAddrPort("on", *on)
	if err != nil {
		return err
	}
	d, err := runFor(*seconds)
	if err != nil {
		return err
	}
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap))
	if err != nil {
		return fmt.Errorf("bind %s: %w", ap, err)
	}
	defer conn.Close()
	_ = conn.SetReadBuffer(4 << 20)
	_ = conn.SetDeadline(time.Now().Add(d))
	buf := make([]byte, 65536)
	var answered uint64
	for {
		n, peer, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				fmt.Printf("answered %d\n", answered)
				return nil
			}
			return err
		}
		if _, err := conn.WriteToUDPAddrPort(buf[:n], peer); err == nil {
			answered++
		}
	}
}
