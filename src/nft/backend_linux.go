package nft

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/nftevents"
	"sort"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"
)

// Backend keeps table inet fastpath in one network namespace.
type Backend struct {
	netns int         // namespace fd; 0 is the caller's namespace
	dial  nltest.Func // replaces the kernel in tests
	// events is the daemon's one socket on nftables notifications (see
	// UseEvents); nil: Watch opens its own.
	events *nftevents.Hub
	root   string // where /proc/modules and /sys/module are read for hints

	// linkExists tells whether a device exists in the namespace; replaced in tests.
	linkExists func(name string) (bool, error)
}

// New returns a Backend for the caller's network namespace.
func New() (*Backend, error) { return NewInNetNS(0) }

// NewInNetNS returns a Backend for the network namespace the fd refers to
// (0: the caller's). It checks that nf_tables answers.
func NewInNetNS(fd int) (*Backend, error) {
	b := &Backend{netns: fd, root: "/"}
	b.linkExists = b.kernelLinkExists
	conn, err := b.dialNetlink()
	if err != nil {
		return nil, err
	}
	conn.Close()
	return b, nil
}

func (b *Backend) dialNetlink() (*netlink.Conn, error) {
	if b.dial != nil {
		return nltest.Dial(b.dial), nil
	}
	conn, err := netlink.Dial(unix.NETLINK_NETFILTER, &netlink.Config{NetNS: b.netns})
	if err != nil {
		return nil, fmt.Errorf("opening the nftables netlink socket (needs root or CAP_NET_ADMIN): %w", err)
	}
	return conn, nil
}

func (b *Backend) nftConn() (*nftables.Conn, error) {
	if b.dial != nil {
		return nftables.New(nftables.WithTestDial(b.dial))
	}
	return nftables.New(nftables.WithNetNSFd(b.netns))
}

// Read reports what the kernel has for table inet fastpath.
func (b *Backend) Read() (netstate.KernelFlowtable, error) {
	o, err := b.read()
	return o.KernelFlowtable, err
}

func (b *Backend) read() (observed, error) {
	o := observed{KernelFlowtable: netstate.KernelFlowtable{Devices: []string{}}} // "devices": [] in JSON, never null
	c, err := b.nftConn()
	if err != nil {
		return o, err
	}
	tables, err := c.ListTablesOfFamily(nftables.TableFamilyINet)
	if err != nil {
		return o, fmt.Errorf("listing nftables tables (is nf_tables available? CONFIG_NF_TABLES, kmod-nft-core): %w", err)
	}
	for _, t := range tables {
		if t.Name == TableName {
			o.TablePresent = true
		}
	}
	if !o.TablePresent {
		return o, nil
	}
	t := ourTable()
	fts, err := c.ListFlowtables(t)
	if err != nil {
		return o, fmt.Errorf("listing flowtables of table inet %s: %w", TableName, err)
	}
	for _, ft := range fts {
		if ft.Name != FlowtableName {
			continue
		}
		o.FlowtablePresent = true
		o.Devices = append([]string{}, ft.Devices...)
		sort.Strings(o.Devices)
		o.Hardware = ft.Flags&nftables.FlowtableFlagsHWOffload != 0
		o.Counter = ft.Flags&nftables.FlowtableFlagsCounter != 0
		o.Handle = ft.Handle
		if ft.Hooknum != nil {
			o.Hook = hookName(uint32(*ft.Hooknum))
		}
		if ft.Priority != nil {
			o.Priority = int32(*ft.Priority)
		}
	}
	chains, err := c.ListChainsOfTableFamily(nftables.TableFamilyINet)
	if err != nil {
		return o, fmt.Errorf("listing chains of table inet %s: %w", TableName, err)
	}
	for _, ch := range chains {
		if ch.Table == nil || ch.Table.Name != TableName || ch.Name != ChainName {
			continue
		}
		o.ChainPresent = true
		o.chainShapeOK = ch.Type == nftables.ChainTypeFilter &&
			ch.Hooknum != nil && *ch.Hooknum == *nftables.ChainHookForward &&
			ch.Priority != nil && *ch.Priority == forwardPriority &&
			(ch.Policy == nil || *ch.Policy == nftables.ChainPolicyAccept)
		rules, err := c.GetRules(t, ch)
		if err != nil {
			return o, fmt.Errorf("listing rules of chain %s in table inet %s: %w", ChainName, TableName, err)
		}
		o.ruleCount = len(rules)
		for _, r := range rules {
			if set, after, ok := isOurRule(r.Exprs); ok && protoSetIsTCPUDP(c, t, set) {
				o.ForwardRule = true
				o.OffloadAfterPackets = after
				o.FirewallDigest = recordedDigest(r.UserData)
			}
		}
	}
	return o, nil
}

// protoSetIsTCPUDP reports whether the named set holds exactly tcp and udp.
func protoSetIsTCPUDP(c *nftables.Conn, t *nftables.Table, name string) bool {
	set, err := c.GetSetByName(t, name)
	if err != nil {
		return false
	}
	elems, err := c.GetSetElements(set)
	if err != nil || len(elems) != 2 {
		return false
	}
	var keys [][]byte
	for _, e := range elems {
		keys = append(keys, e.Key)
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	return bytes.Equal(keys[0], []byte{unix.IPPROTO_TCP}) && bytes.Equal(keys[1], []byte{unix.IPPROTO_UDP})
}

func hookName(n uint32) string {
	if n == unix.NF_NETDEV_INGRESS {
		return "ingress"
	}
	return fmt.Sprintf("hook %d", n)
}

// firstMissingDevice returns the first device the namespace lacks, or "".
func (b *Backend) firstMissingDevice(devs []string) string {
	for _, d := range normalDevices(devs) {
		if ok, err := b.linkExists(d); err == nil && !ok {
			return d
		}
	}
	return ""
}

// kernelLinkExists asks rtnetlink for the link by name (RTM_GETLINK with
// IFLA_IFNAME) in the backend's namespace.
func (b *Backend) kernelLinkExists(name string) (bool, error) {
	conn, err := netlink.Dial(unix.NETLINK_ROUTE, &netlink.Config{NetNS: b.netns})
	if err != nil {
		return false, err
	}
	defer conn.Close()
	ae := netlink.NewAttributeEncoder()
	ae.String(unix.IFLA_IFNAME, name)
	attrs, err := ae.Encode()
	if err != nil {
		return false, err
	}
	ifinfo := make([]byte, unix.SizeofIfInfomsg) // family, type, index, flags, change: all zero
	_, err = conn.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_GETLINK, Flags: netlink.Request},
		Data:   append(ifinfo, attrs...),
	})
	if errors.Is(err, unix.ENODEV) {
		return false, nil
	}
	return err == nil, err
}

// AnyFlowtable reports whether any table of the namespace (fastpath's,
// fw4's, anyone's) holds a flowtable. The kernel sets a conntrack entry's
// offload bits only while a flowtable of the entry's namespace holds its
// flow, so without one no entry is offloaded, and nothing needs counting.
func (b *Backend) AnyFlowtable() (bool, error) {
	c, err := b.nftConn()
	if err != nil {
		return false, err
	}
	tables, err := c.ListTables()
	if err != nil {
		return false, fmt.Errorf("listing nftables tables: %w", err)
	}
	for _, t := range tables {
		switch t.Family {
		case nftables.TableFamilyINet, nftables.TableFamilyIPv4, nftables.TableFamilyIPv6:
		default:
			continue // flowtables live only in ip, ip6 and inet tables
		}
		fts, err := c.ListFlowtables(t)
		if err != nil {
			return false, fmt.Errorf("listing flowtables of table %s: %w", t.Name, err)
		}
		if len(fts) > 0 {
			return true, nil
		}
	}
	return false, nil
}
