package observe

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
)

// A router's /proc/net/route (little endian host): default via 192.0.2.1
// on wan, 192.168.1.0/24 on br-lan, 198.51.100.0/24 via 192.0.2.254.
const procRouteLE = `Iface	Destination	Gateway 	Flags	RefCnt	Use	Metric	Mask		MTU	Window	IRTT
wan	00000000	010200C0	0003	0	0	0	00000000	0	0	0
br-lan	0001A8C0	00000000	0001	0	0	0	00FFFFFF	0	0	0
wan	000200C0	00000000	0001	0	0	0	00FFFFFF	0	0	0
wan	006433C6	FE0200C0	0003	0	0	10	00FFFFFF	0	0	0
`

// The same table as a big-endian MIPS router writes it.
const procRouteBE = `Iface	Destination	Gateway 	Flags	RefCnt	Use	Metric	Mask		MTU	Window	IRTT
wan	00000000	C0000201	0003	0	0	0	00000000	0	0	0
br-lan	C0A80100	00000000	0001	0	0	0	FFFFFF00	0	0	0
wan	C0000200	00000000	0001	0	0	0	FFFFFF00	0	0	0
wan	C6336400	C00002FE	0003	0	0	10	FFFFFF00	0	0	0
`

func TestParseIPv4RoutesBothByteOrders(t *testing.T) {
	for name, tc := range map[string]struct {
		data  string
		order binary.ByteOrder
	}{"little": {procRouteLE, binary.LittleEndian}, "big": {procRouteBE, binary.BigEndian}} {
		t.Run(name, func(t *testing.T) {
			routes, err := ParseIPv4Routes([]byte(tc.data), tc.order)
			if err != nil {
				t.Fatal(err)
			}
			if len(routes) != 4 {
				t.Fatalf("got %d routes, want 4", len(routes))
			}
			want := Route{Dst: netip.MustParsePrefix("198.51.100.0/24"), Gateway: netip.MustParseAddr("192.0.2.254"), Device: "wan", Metric: 10}
			if routes[3] != want {
				t.Errorf("route 3 = %+v, want %+v", routes[3], want)
			}
			if r, _ := Lookup(routes, netip.MustParseAddr("192.168.1.20")); r.Device != "br-lan" {
				t.Errorf("192.168.1.20 via %q, want br-lan", r.Device)
			}
			if r, _ := Lookup(routes, netip.MustParseAddr("203.0.113.9")); r.Device != "wan" || r.Dst.Bits() != 0 {
				t.Errorf("203.0.113.9 via %+v, want the default route on wan", r)
			}
		})
	}
}

func TestParseIPv4RoutesWrongOrderIsRefused(t *testing.T) {
	if _, err := ParseIPv4Routes([]byte(procRouteBE), binary.LittleEndian); err == nil {
		t.Fatal("a big-endian table read as little endian must fail on its masks")
	}
}

func TestParseIPv4RoutesBadLine(t *testing.T) {
	_, err := ParseIPv4Routes([]byte("Iface\tDestination\nwan\tXYZ\t0\t0\t0\t0\t0\t00000000\n"), binary.LittleEndian)
	if err == nil || !strings.Contains(err.Error(), "/proc/net/route:2") {
		t.Fatalf("err = %v, want one naming /proc/net/route:2", err)
	}
}

func TestParseIPv6Routes(t *testing.T) {
	data := "20010db8000000000000000000000000 20 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003     wan\n" +
		"00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo\n"
	routes, err := ParseIPv6Routes([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 1 || routes[0].Dst != netip.MustParsePrefix("2001:db8::/32") || routes[0].Device != "wan" ||
		routes[0].Gateway != netip.MustParseAddr("fe80::1") || routes[0].Metric != 1024 {
		t.Fatalf("routes = %+v", routes)
	}
}

func TestLookupPrefersLongestPrefixThenMetric(t *testing.T) {
	routes := []Route{
		{Dst: netip.MustParsePrefix("10.0.0.0/8"), Device: "a", Metric: 0},
		{Dst: netip.MustParsePrefix("10.1.0.0/16"), Device: "b", Metric: 20},
		{Dst: netip.MustParsePrefix("10.1.0.0/16"), Device: "c", Metric: 10},
	}
	if r, _ := Lookup(routes, netip.MustParseAddr("10.1.2.3")); r.Device != "c" {
		t.Errorf("got %q, want c", r.Device)
	}
	if _, ok := Lookup(routes, netip.MustParseAddr("2001:db8::1")); ok {
		t.Error("an IPv6 address matched an IPv4 route")
	}
}

func FuzzParseIPv4Routes(f *testing.F) {
	f.Add([]byte(procRouteLE))
	f.Add([]byte(procRouteBE))
	f.Fuzz(func(t *testing.T, data []byte) {
		routes, err := ParseIPv4Routes(data, binary.LittleEndian)
		if err == nil {
			for _, r := range routes {
				if !r.Dst.IsValid() {
					t.Fatalf("invalid prefix accepted: %+v", r)
				}
			}
		}
	})
}
