//go:build linux

package labnet

import (
	"errors"
	"fmt"
	"net"
	"strconv"

	"golang.org/x/sys/unix"
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

// EchoUDP answers every IPv4 datagram to port, on any address of
// namespace ns, from the address it was sent to (so far ends taken by
// RouteToServer answer as themselves), until the socket is closed.
func EchoUDP(ns string, port int) (*net.UDPConn, error) {
	c, err := ListenUDP(ns, "0.0.0.0:"+strconv.Itoa(port))
	if err != nil {
		return nil, err
	}
	raw, err := c.SyscallConn()
	if err != nil {
		c.Close()
		return nil, err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_PKTINFO, 1)
	}); err != nil || serr != nil {
		c.Close()
		return nil, fmt.Errorf("IP_PKTINFO: %v %v", err, serr)
	}
	go func() {
		buf := make([]byte, 2048)
		oob := make([]byte, 256)
		for {
			n, oobn, _, from, err := c.ReadMsgUDP(buf, oob)
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
			var reply []byte
			for _, m := range msgs {
				if m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_PKTINFO && len(m.Data) >= unix.SizeofInet4Pktinfo {
					var src unix.Inet4Pktinfo
					copy(src.Spec_dst[:], m.Data[8:12]) // struct in_pktinfo: ifindex, spec_dst, addr
					reply = unix.PktInfo4(&src)
				}
			}
			c.WriteMsgUDP(buf[:n], reply, from)
		}
	}()
	return c, nil
}
