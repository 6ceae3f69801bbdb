//go:build linux

package labnet

import (
	"net"
)

// ListenUDP opens a UDP socket bound to addr ("ip:port") in namespace ns.
func ListenUDP(ns, addr string) (*net.UDPConn, error) {
	var c *net.UDPConn
	err := In(ns, func() error {
		a, err := net.ResolveUDPAddr("udp", addr)
		if err != nil {
			return err
		}
		c, err = net.ListenUDP("udp", a)
		return err
	})
	return c, err
}

// DialUDP opens a UDP socket from laddr to raddr in namespace ns; fixed
// ports on both ends give a fixed 5-tuple.
func DialUDP(ns, laddr, raddr string) (*net.UDPConn, error) {
	var c *net.UDPConn
	err := In(ns, func() error {
		la, err := net.ResolveUDPAddr("udp", laddr)
		if err != nil {
			return err
		}
		ra, err := net.ResolveUDPAddr("udp", raddr)
		if err != nil {
			return err
		}
		c, err = net.DialUDP("udp", la, ra)
		return err
	})
	return c, err
}

// ListenTCP opens a TCP listener on addr in namespace ns.
func ListenTCP(ns, addr string) (net.Listener, error) {
	var l net.Listener
	err := In(ns, func() error {
		var err error
		l, err = net.Listen("tcp", addr)
		return err
	})
	return l, err
}

// DialTCP connects from namespace ns to addr.
func DialTCP(ns, addr string) (net.Conn, error) {
	var c net.Conn
	err := In(ns, func() error {
		var err error
		c, err = net.Dial("tcp", addr)
		return err
	})
	return c, err
}
