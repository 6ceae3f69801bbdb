package nft

import (
	"encoding/binary"
	"sort"
	"testing"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nlenc"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"
)

// fakeKernel stands in for nf_tables at the netlink message boundary. It
// keeps the messages that created each object and answers dumps with them
// (the kernel's dump replies carry the same attributes), models what each
// batch does, all or nothing, and records every batch it receives.
type fakeKernel struct {
	t       *testing.T
	table   *netlink.Message
	ft      *fakeFlowtable
	chain   *netlink.Message
	sets    map[string]netlink.Message
	elems   map[string]netlink.Message
	rules   []netlink.Message
	batches [][]netlink.Message
	handles uint64

	// fail, when set, gives the errno the kernel answers a message with.
	fail func(m netlink.Message) unix.Errno

	queue []netlink.Message // replies not yet received
}

type fakeFlowtable struct {
	devices []string
	flags   uint32
	handle  uint64
}

func newFakeKernel(t *testing.T) (*fakeKernel, *Backend) {
	k := &fakeKernel{t: t, sets: map[string]netlink.Message{}, elems: map[string]netlink.Message{}}
	b := &Backend{dial: k.serve, root: t.TempDir(), linkExists: func(string) (bool, error) { return true, nil }}
	return k, b
}

// attrs decodes the attributes of an nf_tables message (after nfgenmsg);
// undecodable data gives none, which the assertions then report.
func attrs(data []byte) map[uint16][]byte {
	out := map[uint16][]byte{}
	ad, err := netlink.NewAttributeDecoder(data)
	if err != nil {
		return out
	}
	for ad.Next() {
		out[ad.Type()&^unix.NLA_F_NESTED] = ad.Bytes()
	}
	return out
}

func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// flowtableOf returns the devices and flags a NEWFLOWTABLE/DELFLOWTABLE names.
func flowtableOf(m netlink.Message) (devs []string, flags uint32, hasHook bool) {
	a := attrs(m.Data[4:])
	if f, ok := a[nftables.NFTA_FLOWTABLE_FLAGS]; ok {
		flags = binary.BigEndian.Uint32(f)
	}
	hook, ok := a[nftables.NFTA_FLOWTABLE_HOOK]
	if !ok {
		return nil, flags, false
	}
	if d, ok := attrs(hook)[nftables.NFTA_FLOWTABLE_DEVS]; ok {
		ad, _ := netlink.NewAttributeDecoder(d)
		for ad.Next() {
			devs = append(devs, cstring(ad.Bytes()))
		}
	}
	return devs, flags, true
}

func ack(errno unix.Errno) netlink.Message {
	return netlink.Message{Header: netlink.Header{Type: netlink.Error}, Data: append(nlenc.Int32Bytes(-int32(errno)), make([]byte, 16)...)}
}

// reply addresses r to the request req, as the kernel does.
func reply(r, req netlink.Message) netlink.Message {
	r.Header.Sequence, r.Header.PID = req.Header.Sequence, nltest.PID
	return r
}

func (k *fakeKernel) serve(req []netlink.Message) ([]netlink.Message, error) {
	if len(req) == 0 { // the next reply of an earlier request
		if len(k.queue) == 0 {
			k.t.Fatalf("fake kernel: read with no reply pending")
		}
		m := k.queue[0]
		k.queue = k.queue[1:]
		return []netlink.Message{m}, nil
	}
	if req[0].Header.Type == unix.NFNL_MSG_BATCH_BEGIN {
		k.queue = append(k.queue, k.batch(req[1:len(req)-1])...)
		return k.serve(nil)
	}
	m := req[0]
	a := attrs(m.Data[4:])
	var out []netlink.Message
	switch msgType(m) {
	case unix.NFT_MSG_GETTABLE:
		if k.table != nil {
			out = append(out, *k.table)
		}
	case nftables.NFT_MSG_GETFLOWTABLE:
		if k.ft != nil {
			out = append(out, k.flowtableMsg())
		}
	case unix.NFT_MSG_GETCHAIN:
		if k.chain != nil {
			out = append(out, *k.chain)
		}
	case unix.NFT_MSG_GETRULE:
		out = append(out, k.rules...)
	case unix.NFT_MSG_GETSET: // by name, not a dump: reply, then ack
		s, ok := k.sets[cstring(a[unix.NFTA_SET_NAME])]
		if !ok {
			return []netlink.Message{reply(ack(unix.ENOENT), m)}, nil
		}
		k.queue = append(k.queue, reply(ack(0), m))
		return []netlink.Message{reply(s, m)}, nil
	case unix.NFT_MSG_GETSETELEM:
		if e, ok := k.elems[cstring(a[unix.NFTA_SET_ELEM_LIST_SET])]; ok {
			out = append(out, e)
		}
	default:
		k.t.Fatalf("fake kernel: unexpected request type %d", msgType(m))
	}
	out = append(out, netlink.Message{Header: netlink.Header{Type: netlink.Done, Flags: netlink.Multi}, Data: make([]byte, 4)})
	for i := range out {
		out[i].Header.Sequence, out[i].Header.PID = m.Header.Sequence, nltest.PID
	}
	return nltest.Multipart(out)
}

// flowtableMsg is the dump reply for the flowtable, with its handle.
func (k *fakeKernel) flowtableMsg() netlink.Message {
	var bt batch
	if err := bt.add(func(c *nftables.Conn) error {
		ft := ourFlowtable(k.ft.devices, false, false)
		ft.Flags = nftables.FlowtableFlags(k.ft.flags)
		c.AddFlowtable(ft)
		return nil
	}); err != nil {
		k.t.Fatal(err)
	}
	m := bt.msgs[0]
	h := make([]byte, 8)
	binary.BigEndian.PutUint64(h, k.ft.handle)
	extra, _ := netlink.MarshalAttributes([]netlink.Attribute{{Type: nftables.NFTA_FLOWTABLE_HANDLE, Data: h}})
	m.Data = append(append([]byte{}, m.Data...), extra...)
	return m
}

// batch applies msgs to a copy of the state and keeps it only if all
// succeed; one ack per message, as nfnetlink sends them.
func (k *fakeKernel) batch(msgs []netlink.Message) []netlink.Message {
	k.batches = append(k.batches, msgs)
	next := *k
	next.sets, next.elems = copyMap(k.sets), copyMap(k.elems)
	next.rules = append([]netlink.Message{}, k.rules...)
	if k.ft != nil {
		ft := *k.ft
		ft.devices = append([]string{}, k.ft.devices...)
		next.ft = &ft
	}
	acks := make([]netlink.Message, len(msgs))
	failed := false
	for i, m := range msgs {
		errno := unix.Errno(0)
		if k.fail != nil {
			errno = k.fail(m)
		}
		if errno == 0 {
			errno = next.apply(m)
		}
		failed = failed || errno != 0
		acks[i] = reply(ack(errno), m)
	}
	if !failed {
		k.table, k.ft, k.chain, k.sets, k.elems, k.rules, k.handles = next.table, next.ft, next.chain, next.sets, next.elems, next.rules, next.handles
	}
	return acks
}

// asDumped rewrites a NEWSETELEM request the way the kernel dumps it: the
// request may number its list items, a dump types each NFTA_LIST_ELEM.
func (k *fakeKernel) asDumped(m netlink.Message) netlink.Message {
	ad, err := netlink.NewAttributeDecoder(m.Data[4:])
	if err != nil {
		k.t.Fatal(err)
	}
	var top []netlink.Attribute
	for ad.Next() {
		if ad.Type()&^unix.NLA_F_NESTED != unix.NFTA_SET_ELEM_LIST_ELEMENTS {
			top = append(top, netlink.Attribute{Type: ad.Type(), Data: ad.Bytes()})
			continue
		}
		inner, _ := netlink.NewAttributeDecoder(ad.Bytes())
		var items []netlink.Attribute
		for inner.Next() {
			items = append(items, netlink.Attribute{Type: unix.NLA_F_NESTED | unix.NFTA_LIST_ELEM, Data: inner.Bytes()})
		}
		list, _ := netlink.MarshalAttributes(items)
		top = append(top, netlink.Attribute{Type: unix.NLA_F_NESTED | unix.NFTA_SET_ELEM_LIST_ELEMENTS, Data: list})
	}
	data, err := netlink.MarshalAttributes(top)
	if err != nil {
		k.t.Fatal(err)
	}
	m.Data = append(append([]byte{}, m.Data[:4]...), data...)
	return m
}

func copyMap(m map[string]netlink.Message) map[string]netlink.Message {
	out := map[string]netlink.Message{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (k *fakeKernel) apply(m netlink.Message) unix.Errno {
	a := attrs(m.Data[4:])
	switch msgType(m) {
	case unix.NFT_MSG_NEWTABLE:
		if k.table == nil {
			m := m
			k.table = &m
		}
	case unix.NFT_MSG_DELTABLE:
		if k.table == nil {
			return unix.ENOENT
		}
		k.table, k.ft, k.chain, k.rules = nil, nil, nil, nil
		k.sets, k.elems = map[string]netlink.Message{}, map[string]netlink.Message{}
	case nftables.NFT_MSG_NEWFLOWTABLE:
		devs, flags, _ := flowtableOf(m)
		if k.ft == nil {
			k.handles++
			k.ft = &fakeFlowtable{devices: devs, flags: flags, handle: k.handles}
			break
		}
		if flags&uint32(nftables.FlowtableFlagsHWOffload) != k.ft.flags&uint32(nftables.FlowtableFlagsHWOffload) {
			return unix.EOPNOTSUPP
		}
		k.ft.devices = append(k.ft.devices, difference(devs, k.ft.devices)...)
	case nftables.NFT_MSG_DELFLOWTABLE:
		devs, _, hasHook := flowtableOf(m)
		if k.ft == nil {
			return unix.ENOENT
		}
		if !hasHook {
			k.ft = nil
			break
		}
		if len(difference(devs, k.ft.devices)) > 0 {
			return unix.ENOENT
		}
		k.ft.devices = difference(k.ft.devices, devs)
	case unix.NFT_MSG_NEWCHAIN:
		if k.chain == nil {
			m := m
			k.chain = &m
		}
	case unix.NFT_MSG_DELCHAIN:
		if len(k.rules) > 0 {
			return unix.EBUSY
		}
		k.chain = nil
	case unix.NFT_MSG_NEWSET:
		k.sets[cstring(a[unix.NFTA_SET_NAME])] = m
	case unix.NFT_MSG_NEWSETELEM:
		k.elems[cstring(a[unix.NFTA_SET_ELEM_LIST_SET])] = k.asDumped(m)
	case unix.NFT_MSG_NEWRULE:
		k.rules = append(k.rules, m)
	case unix.NFT_MSG_DELRULE: // flush chain
		k.rules = nil
	default:
		k.t.Fatalf("fake kernel: unexpected batch message type %d", msgType(m))
	}
	return 0
}

// lastBatch returns the types of the last batch and how many batches came.
func (k *fakeKernel) lastBatch() (types []int, n int) {
	if len(k.batches) == 0 {
		return nil, 0
	}
	for _, m := range k.batches[len(k.batches)-1] {
		types = append(types, msgType(m))
	}
	return types, len(k.batches)
}

func sortedCopy(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}
