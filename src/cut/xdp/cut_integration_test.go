//go:build linux && !mips

package xdp

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/lab/labnet"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// flow is one direction of a cut connection: frames of spec flood from a
// sender into a router device whose tap counts what reaches the stack;
// bystander frames on the same path are never cut.
type flow struct {
	via  *sender
	tap  *tap
	spec frameSpec
	id   byte
}

func (f flow) bystander() frameSpec {
	b := f.spec
	b.tuple.DstPort++
	return b
}

// cutHolds floods every flow, cuts the tuples, proves that no frame of a
// flow reaches the stack while at least 1,000 of it are dropped in the
// driver, releases, and proves the frames reach the stack again.
func (r *rig) cutHolds(t *testing.T, flows []flow, tuples []cut.Tuple) {
	t.Helper()
	for _, f := range flows {
		startFlood(t, f.via, f.spec, f.id)
	}
	for _, f := range flows {
		waitFor(t, "flood frames at the tap before the cut", func() bool { return f.tap.count(f.id) >= 20 })
	}
	if err := r.b.Cut(tuples); err != nil {
		t.Fatal(err)
	}
	before := make([]uint64, len(flows))
	dropped0 := make([]uint64, len(flows))
	for i, f := range flows {
		barrier(t, f.via, f.tap, f.bystander())
		before[i] = f.tap.count(f.id)
		dropped0[i] = r.packets(t, f.spec.tuple)
	}
	for i, f := range flows {
		waitFor(t, "1,000 frames dropped in the driver", func() bool { return r.packets(t, f.spec.tuple) >= dropped0[i]+1000 })
	}
	for i, f := range flows {
		barrier(t, f.via, f.tap, f.bystander())
		during := f.tap.count(f.id) - before[i]
		dropped := r.packets(t, f.spec.tuple)
		t.Logf("%s: %d frames dropped in the driver while cut, %d reached the stack (%d before the cut)",
			f.spec.tuple, dropped-dropped0[i], during, before[i])
		if during != 0 {
			t.Errorf("%s: %d frames reached the stack while cut, want 0", f.spec.tuple, during)
		}
	}
	if _, err := r.b.Release(tuples); err != nil {
		t.Fatal(err)
	}
	for _, f := range flows {
		c := f.tap.count(f.id)
		waitFor(t, "flood frames at the tap after the release", func() bool { return f.tap.count(f.id) >= c+20 })
		if _, isCut, err := r.b.Lookup(f.spec.tuple); err != nil || isCut {
			t.Errorf("%s still cut after release (%v)", f.spec.tuple, err)
		}
	}
}

func (r *rig) packets(t *testing.T, tu cut.Tuple) uint64 {
	t.Helper()
	s, isCut, err := r.b.Lookup(tu)
	if err != nil {
		t.Fatal(err)
	}
	if !isCut {
		return 0
	}
	return s.Packets
}

// Both directions of a connection, each arriving on its own router device,
// are dropped in the driver while cut and pass again after the release:
// IPv4 and IPv6, UDP and TCP, IPv4 options, one VLAN tag, PPPoE sessions.
func TestIntegrationCutDropsInDriver(t *testing.T) {
	r := newRig(t)
	r.open(t)
	udp4 := cut.Tuple{Proto: "udp", Src: labnet.ClientV4, Dst: labnet.ServerV4, SrcPort: 40000, DstPort: 5001}
	tcp4 := cut.Tuple{Proto: "tcp", Src: labnet.ClientV4, Dst: labnet.ServerV4, SrcPort: 40001, DstPort: 443}
	udp6 := cut.Tuple{Proto: "udp", Src: labnet.ClientV6, Dst: labnet.ServerV6, SrcPort: 40002, DstPort: 5001}
	tcp6 := cut.Tuple{Proto: "tcp", Src: labnet.ClientV6, Dst: labnet.ServerV6, SrcPort: 40003, DstPort: 443}
	cases := []struct {
		name string
		spec frameSpec
	}{
		{"ipv4 udp", frameSpec{tuple: udp4}},
		{"ipv4 tcp with options", frameSpec{tuple: tcp4, ipv4Opts: 2}},
		{"ipv6 udp", frameSpec{tuple: udp6}},
		{"ipv6 tcp", frameSpec{tuple: tcp6}},
		{"vlan ipv4", frameSpec{tuple: udp4, vlan: 100}},
		{"vlan ipv6", frameSpec{tuple: tcp6, vlan: 100}},
		{"pppoe ipv4", frameSpec{tuple: udp4, pppoe: true}},
		{"pppoe ipv6", frameSpec{tuple: udp6, pppoe: true}},
		{"vlan pppoe ipv4", frameSpec{tuple: tcp4, vlan: 7, pppoe: true}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reply := c.spec
			reply.tuple = c.spec.tuple.Reverse()
			id := byte(2 * i)
			r.cutHolds(t, []flow{
				{via: r.client, tap: r.lanTap, spec: c.spec, id: id + 1},
				{via: r.server, tap: r.wanTap, spec: reply, id: id + 2},
			}, []cut.Tuple{c.spec.tuple, reply.tuple})
		})
	}
}

// A release is never undone by the frames that keep coming: hundreds of
// cut and release rounds under a flood, each release checked after frames
// of the released tuple have passed the program again.
func TestIntegrationReleaseUnderFloodHolds(t *testing.T) {
	r := newRig(t)
	b := r.open(t)
	tu := cut.Tuple{Proto: "udp", Src: labnet.ClientV4, Dst: labnet.ServerV4, SrcPort: 41000, DstPort: 5001}
	both := []cut.Tuple{tu, tu.Reverse()}
	const id = 50
	fl := startFlood(t, r.client, frameSpec{tuple: tu}, id)
	const rounds = 300
	var dropped uint64
	for round := 0; round < rounds; round++ {
		if err := b.Cut(both); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "a frame dropped by the fresh cut", func() bool { return r.packets(t, tu) >= 1 })
		dropped += r.packets(t, tu)
		if _, err := b.Release(both); err != nil {
			t.Fatal(err)
		}
		c := r.lanTap.count(id)
		waitFor(t, "frames passing after the release", func() bool { return r.lanTap.count(id) >= c+5 })
		if _, isCut, err := b.Lookup(tu); err != nil || isCut {
			t.Fatalf("round %d: the released tuple is back in the map (%v)", round, err)
		}
	}
	fl.halt(t)
	stats, err := b.Stats()
	if err != nil || len(stats) != 0 {
		t.Errorf("after %d rounds the map holds %v (%v), want nothing", rounds, stats, err)
	}
	t.Logf("%d cut/release rounds under a flood of %d frames: %d frames dropped while cut, every release held", rounds, fl.sent.Load(), dropped)
}

// Stats lists each cut tuple with the frames the driver dropped and the
// last one's time; Detach and Close take only fastpath's program off.
func TestIntegrationStatsAndDetach(t *testing.T) {
	r := newRig(t)
	b := r.open(t)
	tu := cut.Tuple{Proto: "udp", Src: labnet.ClientV4, Dst: labnet.ServerV4, SrcPort: 42000, DstPort: 5001}
	if err := b.Cut([]cut.Tuple{tu, tu.Reverse()}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		f, _ := r.client.frame(frameSpec{tuple: tu}, 60)
		if err := r.client.send(f); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "ten frames dropped", func() bool { return r.packets(t, tu) >= 10 })
	stats, err := b.Stats()
	if err != nil {
		t.Fatal(err)
	}
	got := map[cut.Tuple]TupleStats{}
	for _, s := range stats {
		got[s.Tuple] = s
	}
	if s := got[tu]; s.Packets != 10 || s.LastSeen.IsZero() || s.Since.IsZero() || s.LastSeen.Before(s.Since) {
		t.Errorf("Stats of %s = %+v, want 10 packets and a last frame after the cut", tu, s)
	}
	if s, ok := got[tu.Reverse()]; !ok || s.Packets != 0 || !s.LastSeen.IsZero() {
		t.Errorf("Stats of the reverse tuple = %+v (listed %v), want listed with no frame", s, ok)
	}
	if len(stats) != 2 {
		t.Errorf("Stats lists %d tuples, want 2", len(stats))
	}

	if err := b.Detach("lan0"); err != nil {
		t.Fatal(err)
	}
	if l := r.link(t, "lan0"); l.attached != xdpAttachedNone {
		t.Errorf("lan0 after Detach: XDP %s program %d, want none", attachedMode(l.attached), l.progID)
	}
	if l := r.link(t, "wan0"); l.progID != b.progID {
		t.Errorf("wan0 after Detach(lan0): program %d, want fastpath's %d", l.progID, b.progID)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if l := r.link(t, "wan0"); l.attached != xdpAttachedNone {
		t.Errorf("wan0 after Close: XDP %s program %d, want none", attachedMode(l.attached), l.progID)
	}
}

func (r *rig) conn(t *testing.T) *netlink.Conn {
	t.Helper()
	c, err := netlink.Dial(unix.NETLINK_ROUTE, &netlink.Config{NetNS: r.netns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (r *rig) link(t *testing.T, dev string) linkXDP {
	t.Helper()
	l, err := queryLink(r.conn(t), dev)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// passProgram loads a program of another owner: XDP_PASS.
func passProgram(t *testing.T) (fd int, id uint32) {
	t.Helper()
	var a asm
	a.movImm(r0, xdpPass)
	a.exit()
	code, err := a.assemble(binary.NativeEndian)
	if err != nil {
		t.Fatal(err)
	}
	fd, err = loadProgram("foreign_pass", code, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	info, err := programInfo(fd, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fd, info.id
}

// A program of another owner, native or generic, stays on its device; the
// device falls back with the reason, and Close leaves the program alone.
func TestIntegrationForeignProgramLeftInPlace(t *testing.T) {
	r := newRig(t)
	c := r.conn(t)
	fd, id := passProgram(t)
	for _, mode := range []struct {
		name  string
		flags uint32
		want  uint8
	}{{"native", xdpFlagDrvMode, xdpAttachedDrv}, {"generic", 1 << 1, xdpAttachedSKB}} {
		t.Run(mode.name, func(t *testing.T) {
			l := r.link(t, "lan0")
			if err := setXDP(c, l.index, int32(fd), mode.flags, -1); err != nil {
				t.Fatal(err)
			}
			defer setXDP(c, l.index, -1, mode.flags, -1)
			b, err := Open(Options{Veth: true, MaxEntries: 64, NetNS: r.netns})
			if err != nil {
				t.Fatal(err)
			}
			d := b.Attach("lan0")
			t.Logf("Attach(lan0) with a foreign %s program: %+v", mode.name, d)
			if d.XDP || !strings.Contains(d.Reason, "another owner's") || !strings.Contains(d.Reason, "netdev ingress") {
				t.Errorf("Attach(lan0) = %+v, want no XDP, the foreign program named and the netdev fallback", d)
			}
			if w := b.Attach("wan0"); !w.XDP {
				t.Errorf("Attach(wan0) = %+v, want native XDP beside the foreign lan0", w)
			}
			if devs := b.Devices(); len(devs) != 2 || devs[0].Name != "lan0" || devs[0].XDP || !devs[1].XDP {
				t.Errorf("Devices() = %+v", devs)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if l := r.link(t, "lan0"); l.progID != id || l.attached != mode.want {
				t.Errorf("lan0 after Close: %s program %d, want the foreign %s program %d", attachedMode(l.attached), l.progID, mode.name, id)
			}
		})
	}
}

// A device whose driver has no native XDP (a bridge) falls back with the reason.
func TestIntegrationNoNativeXDPFallsBack(t *testing.T) {
	r := newRig(t)
	if _, err := r.lab.Exec(r.lab.Router, "ip", "link", "add", "br9", "type", "bridge"); err != nil {
		t.Fatal(err)
	}
	b, err := Open(Options{Veth: true, MaxEntries: 64, NetNS: r.netns})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	d := b.Attach("br9")
	t.Logf("Attach(br9): %+v", d)
	if d.XDP || !strings.Contains(d.Reason, "no native XDP") || !strings.Contains(d.Reason, "netdev ingress") {
		t.Errorf("Attach(br9) = %+v, want no XDP: no native XDP, cutting at netdev ingress", d)
	}
	if d := b.Attach("nosuch0"); d.XDP || !strings.Contains(d.Reason, "does not exist") {
		t.Errorf("Attach(nosuch0) = %+v, want a missing device named", d)
	}
}

// Without Options.Veth a veth keeps the netdev cut, with the reason; with
// it the same veth runs the program.
func TestIntegrationVethOnlyWhenAsked(t *testing.T) {
	r := newRig(t)
	b, err := Open(Options{MaxEntries: 64, NetNS: r.netns})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if d := b.Attach("lan0"); d.XDP || !strings.Contains(d.Reason, "is a veth") || !strings.Contains(d.Reason, "netdev ingress") {
		t.Errorf("Attach(lan0) without Veth = %+v, want the netdev cut and why", d)
	}
	if l := r.link(t, "lan0"); l.attached != xdpAttachedNone {
		t.Errorf("lan0 runs XDP (%s) although Veth was not asked", attachedMode(l.attached))
	}
	v, err := Open(Options{Veth: true, MaxEntries: 64, NetNS: r.netns})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if d := v.Attach("lan0"); !d.XDP {
		t.Errorf("Attach(lan0) with Veth = %+v, want native XDP", d)
	}
}

// A later run replaces fastpath's own program of an earlier one (a daemon
// killed, or one that left with Leave) and carries its cuts over; the
// earlier backend's Close then leaves the new program in place.
func TestIntegrationEarlierRunReplaced(t *testing.T) {
	r := newRig(t)
	earlier, err := Open(Options{Veth: true, MaxEntries: 64, NetNS: r.netns})
	if err != nil {
		t.Fatal(err)
	}
	defer earlier.Close()
	if d := earlier.Attach("lan0"); !d.XDP {
		t.Fatalf("Attach = %+v", d)
	}
	tu := cut.Tuple{Proto: "tcp", Src: labnet.ClientV6, Dst: labnet.ServerV6, SrcPort: 43000, DstPort: 443}
	if err := earlier.Cut([]cut.Tuple{tu}); err != nil {
		t.Fatal(err)
	}
	later := r.open(t)
	if l := r.link(t, "lan0"); l.progID != later.progID {
		t.Fatalf("lan0 runs program %d, want the later run's %d", l.progID, later.progID)
	}
	if _, isCut, err := later.Lookup(tu); err != nil || !isCut {
		t.Errorf("the earlier run's cut of %s was not carried over (%v)", tu, err)
	}
	if err := earlier.Close(); err != nil {
		t.Fatal(err)
	}
	if l := r.link(t, "lan0"); l.progID != later.progID {
		t.Errorf("the earlier run's Close took lan0's program: now %d, want %d", l.progID, later.progID)
	}
	f, _ := r.client.frame(frameSpec{tuple: tu}, 70)
	if err := r.client.send(f); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the carried-over cut dropping a frame", func() bool { return r.packets(t, tu) >= 1 })
}

// A program the verifier refuses comes back with the verifier's log.
func TestIntegrationVerifierLog(t *testing.T) {
	needRoot(t)
	var a asm
	a.load(sizeW, r0, r7, 0) // r7 was never written
	a.exit()
	code, err := a.assemble(binary.NativeEndian)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := loadProgram("bad", code, nil)
	if err == nil {
		unix.Close(fd)
		t.Fatal("the kernel loaded a program that reads an unset register")
	}
	var ve *VerifierError
	if !errors.As(err, &ve) || !strings.Contains(ve.Log, "R7 !read_ok") {
		t.Errorf("error %q, want a *VerifierError whose log names R7 !read_ok", err)
	}
}

// Leave keeps the program on its devices, still dropping cut frames, for
// the next run to take over.
func TestIntegrationLeaveKeepsDropping(t *testing.T) {
	r := newRig(t)
	b, err := Open(Options{Veth: true, MaxEntries: 64, NetNS: r.netns})
	if err != nil {
		t.Fatal(err)
	}
	if d := b.Attach("wan0"); !d.XDP {
		t.Fatalf("Attach = %+v", d)
	}
	id := b.progID
	tu := cut.Tuple{Proto: "udp", Src: labnet.ServerV4, Dst: labnet.ClientV4, SrcPort: 5001, DstPort: 44000}
	if err := b.Cut([]cut.Tuple{tu}); err != nil {
		t.Fatal(err)
	}
	if err := b.Leave(); err != nil {
		t.Fatal(err)
	}
	if l := r.link(t, "wan0"); l.progID != id || l.attached != xdpAttachedDrv {
		t.Fatalf("wan0 after Leave: %s program %d, want fastpath's %d still native", attachedMode(l.attached), l.progID, id)
	}
	// Frames of the cut tuple still stop in the driver: a bystander after
	// them reaches the tap, they do not.
	f, _ := r.server.frame(frameSpec{tuple: tu}, 80)
	for i := 0; i < 5; i++ {
		if err := r.server.send(f); err != nil {
			t.Fatal(err)
		}
	}
	bystander := tu
	bystander.DstPort++
	barrier(t, r.server, r.wanTap, frameSpec{tuple: bystander})
	if n := r.wanTap.count(80); n != 0 {
		t.Errorf("%d frames of the cut tuple reached the stack after Leave, want 0", n)
	}
	later := r.open(t)
	if _, isCut, err := later.Lookup(tu); err != nil || !isCut {
		t.Errorf("the next run did not take the cut of %s over (%v)", tu, err)
	}
}

// A full map refuses the next tuple with the option to raise; what it
// holds stays cut.
func TestIntegrationMapFull(t *testing.T) {
	needRoot(t)
	b, err := Open(Options{Veth: true, MaxEntries: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tu := cut.Tuple{Proto: "udp", Src: "10.0.0.1", Dst: "10.0.0.2", SrcPort: 1, DstPort: 2}
	if err := b.Cut([]cut.Tuple{tu, tu.Reverse()}); err != nil {
		t.Fatal(err)
	}
	third := tu
	third.SrcPort = 3
	if err := b.Cut([]cut.Tuple{third}); err == nil || !strings.Contains(err.Error(), "cut_set_size") {
		t.Errorf("Cut into a full map: %v, want an error naming cut_set_size", err)
	}
	if err := b.Cut([]cut.Tuple{tu}); err != nil {
		t.Errorf("Cut of a tuple already cut in a full map: %v, want nil", err)
	}
	if stats, err := b.Stats(); err != nil || len(stats) != 2 {
		t.Errorf("Stats = %v, %v; want the two tuples", stats, err)
	}
	if _, err := Open(Options{Veth: true, MaxEntries: 1}); err == nil {
		t.Error("Open took a map of one entry")
	}
}

// Expire releases a tuple whose cut is older than the cutoff and that no
// frame came for since, and keeps one whose last frame is newer.
func TestIntegrationExpire(t *testing.T) {
	r := newRig(t)
	b := r.open(t)
	quiet := cut.Tuple{Proto: "udp", Src: labnet.ClientV4, Dst: labnet.ServerV4, SrcPort: 45000, DstPort: 5001}
	busy := cut.Tuple{Proto: "udp", Src: labnet.ClientV4, Dst: labnet.ServerV4, SrcPort: 45001, DstPort: 5001}
	if err := b.Cut([]cut.Tuple{quiet, busy}); err != nil {
		t.Fatal(err)
	}
	cutAt := r.raw(t, quiet).cutNS
	waitFor(t, "the monotonic clock to pass the cut", func() bool { now, _ := clocks(); return uint64(now) > cutAt })
	f, _ := r.client.frame(frameSpec{tuple: busy}, 90)
	if err := r.client.send(f); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the busy tuple's frame dropped", func() bool { return r.raw(t, busy).packets == 1 })
	busyAt := r.raw(t, busy).lastNS
	if busyAt <= cutAt {
		t.Fatalf("the frame's stamp %d is not after the cut's %d", busyAt, cutAt)
	}
	released, _, err := b.expireBefore(time.Duration(cutAt + (busyAt-cutAt)/2))
	if err != nil {
		t.Fatal(err)
	}
	if len(released) != 1 || released[0] != quiet {
		t.Errorf("expireBefore released %v, want only %s", released, quiet)
	}
	if _, isCut, _ := b.Lookup(busy); !isCut {
		t.Errorf("%s was released although its last frame is after the cutoff", busy)
	}
	if got, next, err := b.Expire(time.Hour); err != nil || len(got) != 0 || next <= 30*time.Minute {
		t.Errorf("Expire(1h) released %v, next in %v (%v), want nothing and the next in about an hour", got, next, err)
	}
	if got, next, err := b.Expire(0); err != nil || len(got) != 1 || got[0] != busy || next != 0 {
		t.Errorf("Expire(0) released %v, next in %v (%v), want %s and none left", got, next, err, busy)
	}
}

func (r *rig) raw(t *testing.T, tu cut.Tuple) value {
	t.Helper()
	k := mustKey(t, tu)
	v := make([]byte, ValueSize)
	if err := mapLookup(r.b.mapFD, k[:], v); err != nil {
		t.Fatalf("look up %s: %v", tu, err)
	}
	return decodeValue(v, binary.NativeEndian)
}

// SetDevices reconciles: devices left out are detached, a program taken
// off from outside comes back, and an unchanged call changes nothing.
func TestIntegrationSetDevices(t *testing.T) {
	r := newRig(t)
	b, err := Open(Options{Veth: true, MaxEntries: 64, NetNS: r.netns})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	devs, err := b.SetDevices([]string{"wan0", "lan0"})
	if err != nil || len(devs) != 2 || !devs[0].XDP || !devs[1].XDP || devs[0].Name != "lan0" {
		t.Fatalf("SetDevices(wan0, lan0) = %+v, %v", devs, err)
	}
	if devs, err = b.SetDevices([]string{"wan0"}); err != nil || len(devs) != 1 || devs[0].Name != "wan0" {
		t.Fatalf("SetDevices(wan0) = %+v, %v", devs, err)
	}
	if l := r.link(t, "lan0"); l.attached != xdpAttachedNone {
		t.Errorf("lan0 left out: XDP %s program %d, want none", attachedMode(l.attached), l.progID)
	}
	l := r.link(t, "wan0")
	if err := setXDP(r.conn(t), l.index, -1, xdpFlagDrvMode, -1); err != nil {
		t.Fatal(err)
	}
	if devs, err = b.SetDevices([]string{"wan0"}); err != nil || !devs[0].XDP {
		t.Fatalf("SetDevices(wan0) after the program was taken off: %+v, %v", devs, err)
	}
	if l := r.link(t, "wan0"); l.progID != b.progID {
		t.Errorf("wan0 runs program %d, want fastpath's %d back", l.progID, b.progID)
	}
	if got := b.Devices(); len(got) != 1 || got[0].Name != "wan0" {
		t.Errorf("Devices() = %+v, want wan0 alone", got)
	}
}
