//go:build linux && !mips

package xdp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// ProgramName names fastpath's program in the kernel (bpftool prog, ip
// link), so a later run tells its own program from a foreign one.
const ProgramName = "fastpath_cut"

const mapName = "fastpath_cuts"

// Options configure a Backend.
type Options struct {
	MaxEntries int // tuples the map holds; a cut connection takes two
	NetNS      int // network namespace fd for the devices; 0: the caller's
	// Veth runs the program on veth devices too. Their XDP is native in
	// name only: it runs on skbs the peer already built, converted (and
	// copied when they are GSO or cloned), and it turns the peer's GSO off,
	// which slowed TCP forwarding through the lab's veths about eightfold;
	// dropping there gains nothing over netdev ingress. Tests use it.
	Veth bool
	// Forward adds the forward stage (see forward.go): established flows
	// of the device's flowtable are sent out in the driver. Where the
	// kernel cannot, the backend cuts alone and ForwardError says why.
	Forward bool
}

// Device is where one device's cut runs and why.
type Device struct {
	Name   string `json:"name"`
	XDP    bool   `json:"xdp"`    // dropped in the driver by native XDP
	Reason string `json:"reason"` // for status and LuCI; says what runs instead when XDP is false
}

// Backend is the map, the program and the devices it is attached to.
type Backend struct {
	mu         sync.Mutex
	nl         *netlink.Conn
	mapFD      int
	progFD     int
	progID     uint32
	maxEntries int
	veth       bool
	devices    map[string]*attachment
	netns      int        // Options.NetNS
	fwd        *forwarder // nil: the program only cuts
	fwdErr     error      // why Options.Forward could not be had
}

type attachment struct {
	Device
	index int32
}

// Open creates the map of cut tuples and loads the program. A refusal by
// the kernel is a *VerifierError carrying the verifier's log.
func Open(opt Options) (*Backend, error) {
	if opt.MaxEntries < 2 || opt.MaxEntries > 1<<24 {
		return nil, fmt.Errorf("xdp cut map of %d entries: use 2 to %d", opt.MaxEntries, 1<<24)
	}
	b := &Backend{mapFD: -1, progFD: -1, maxEntries: opt.MaxEntries, veth: opt.Veth, netns: opt.NetNS, devices: map[string]*attachment{}}
	var err error
	if b.nl, err = netlink.Dial(unix.NETLINK_ROUTE, &netlink.Config{NetNS: opt.NetNS}); err != nil {
		return nil, fmt.Errorf("rtnetlink: %w", err)
	}
	_ = b.nl.SetOption(netlink.ExtendedAcknowledge, true) // the kernel's reason text; older kernels lack it
	if b.mapFD, err = createMap(mapName, KeySize, ValueSize, uint32(opt.MaxEntries)); err != nil {
		b.Close()
		return nil, err
	}
	if opt.Forward {
		if b.fwd, b.fwdErr = openForwarder(); b.fwdErr == nil {
			b.progFD, b.fwdErr = b.load()
			if b.fwdErr != nil {
				b.fwd.close()
				b.fwd = nil
			}
		}
	}
	if b.progFD < 0 {
		if b.progFD, err = b.load(); err != nil {
			b.Close()
			return nil, err
		}
	}
	info, err := programInfo(b.progFD, nil)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("read the loaded program's id: %w", err)
	}
	b.progID = info.id
	return b, nil
}

// load builds and loads the program, with the forward stage when b.fwd is set.
func (b *Backend) load() (int, error) {
	var spec *forwardSpec
	var fds []int32
	if b.fwd != nil {
		spec, fds = &b.fwd.spec, b.fwd.fdArray()
	}
	code, err := program(int32(b.mapFD), spec, binary.NativeEndian)
	if err != nil {
		return -1, err
	}
	return loadProgram(ProgramName, code, fds)
}

// Forwarding says whether the program forwards (Options.Forward), and if
// it was asked for and cannot, why.
func (b *Backend) Forwarding() (bool, error) { return b.fwd != nil, b.fwdErr }

// ForwardCounters are the forward stage's counters over every CPU, since Open.
func (b *Backend) ForwardCounters() (ForwardCounters, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fwd == nil {
		return ForwardCounters{}, errors.New("the XDP program does not forward")
	}
	return b.fwd.counters()
}

// Attach runs the program in dev's driver (native XDP). It never replaces
// a program of another owner; fastpath's own program of an earlier run is
// replaced, its cuts carried over. When XDP cannot run the Device says why
// and the caller cuts there in the netdev ingress table instead. Attaching
// an attached device again costs one netlink query.
func (b *Backend) Attach(dev string) Device {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.attach(dev)
	b.devices[dev] = d
	b.routeOut(d)
	return d.Device
}

// SetDevices makes the devices the program runs on exactly devs: it
// attaches (or checks again) each of them and detaches the others. Calling
// it again with the same devices changes nothing in the kernel; a device
// that came back (hotplug) or whose foreign program left gets the program.
func (b *Backend) SetDevices(devs []string) ([]Device, error) {
	want := make(map[string]bool, len(devs))
	names := make([]string, 0, len(devs))
	for _, d := range devs {
		if !want[d] {
			want[d] = true
			names = append(names, d)
		}
	}
	sort.Strings(names)
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []error
	for name, a := range b.devices {
		if !want[name] {
			delete(b.devices, name)
			if a.XDP {
				errs = append(errs, b.detach(a))
			}
		}
	}
	out := make([]Device, 0, len(names))
	for _, d := range names {
		a := b.attach(d)
		b.devices[d] = a
		b.routeOut(a)
		out = append(out, a.Device)
	}
	return out, errors.Join(errs...)
}

// routeOut keeps the redirect map to the devices the program runs on:
// their drivers take redirected frames (virtio_net, for one, only while
// it runs an XDP program).
func (b *Backend) routeOut(a *attachment) {
	if b.fwd == nil {
		return
	}
	if !a.XDP {
		b.fwd.remove(a.Name)
		return
	}
	if err := b.fwd.add(a.Name, a.index, b.netns); err != nil {
		a.Reason += "; not forwarding to it: " + err.Error()
	}
}

func (b *Backend) attach(dev string) *attachment {
	refuse := func(index int32, format string, args ...any) *attachment {
		return &attachment{Device: Device{Name: dev, Reason: fmt.Sprintf(format, args...) + "; cutting at netdev ingress"}, index: index}
	}
	l, err := queryLink(b.nl, dev)
	if err != nil {
		return refuse(0, "%v", err)
	}
	ok := &attachment{Device: Device{Name: dev, XDP: true, Reason: fmt.Sprintf("native XDP in the driver (program %d)", b.progID)}, index: l.index}
	if l.progID == b.progID && l.attached == xdpAttachedDrv {
		return ok
	}
	if l.kind == "veth" && !b.veth && l.attached == xdpAttachedNone {
		return refuse(l.index, "%s is a veth, whose XDP runs on skbs its peer already built and turns the peer's GSO off: no gain over netdev ingress (cut_backend xdp uses it anyway)", dev)
	}
	if l.attached != xdpAttachedNone {
		earlier, why := b.earlierRun(l)
		if earlier < 0 {
			return refuse(l.index, "%s", why)
		}
		defer unix.Close(earlier)
		err = setXDP(b.nl, l.index, int32(b.progFD), xdpFlagDrvMode|xdpFlagReplace, int32(earlier))
		if errors.Is(err, unix.EINVAL) {
			// Before Linux 5.7 there is no expected program: our own
			// program was there a moment ago, so replace it plainly.
			err = setXDP(b.nl, l.index, int32(b.progFD), xdpFlagDrvMode, -1)
		}
		if err != nil {
			return refuse(l.index, "replacing fastpath's XDP program of an earlier run on %s failed: %s", dev, kernelMessage(err))
		}
		return ok
	}
	err = setXDP(b.nl, l.index, int32(b.progFD), xdpFlagDrvMode|xdpFlagUpdateIfNoExist, -1)
	switch {
	case err == nil:
		return ok
	case errors.Is(err, unix.EOPNOTSUPP):
		return refuse(l.index, "the driver of %s has no native XDP: %s", dev, kernelMessage(err))
	case errors.Is(err, unix.EBUSY), errors.Is(err, unix.EEXIST):
		return refuse(l.index, "another XDP program came onto %s meanwhile (left in place): %s", dev, kernelMessage(err))
	}
	return refuse(l.index, "the kernel refused native XDP on %s: %s", dev, kernelMessage(err))
}

// earlierRun returns an fd of the program on l when it is fastpath's own
// program of an earlier run, after copying its cuts into our map; else -1
// and why the program stays.
func (b *Backend) earlierRun(l linkXDP) (int, string) {
	foreign := func(what string) (int, string) {
		return -1, fmt.Sprintf("%s XDP program is attached (%s mode); fastpath never replaces it", what, attachedMode(l.attached))
	}
	if l.progID == 0 {
		return foreign("another owner's")
	}
	fd, err := progFDByID(l.progID)
	if err != nil {
		return foreign(fmt.Sprintf("another owner's (program %d)", l.progID))
	}
	mapIDs := make([]uint32, 4)
	info, err := programInfo(fd, mapIDs)
	if err != nil || cString(info.name[:]) != ProgramName || l.attached != xdpAttachedDrv {
		unix.Close(fd)
		return foreign(fmt.Sprintf("another owner's (program %d %q)", l.progID, cString(info.name[:])))
	}
	if info.nrMapIDs >= 1 && info.nrMapIDs <= 4 {
		b.carryOver(mapIDs[0])
	}
	return fd, ""
}

// carryOver copies the cut tuples of an earlier run's map, counters and
// stamps included, so a restart does not let cut connections through.
func (b *Backend) carryOver(mapID uint32) {
	fd, err := mapFDByID(mapID)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	if info, err := mapInformation(fd); err != nil || info.keySize != KeySize || info.valueSize != ValueSize {
		return // another layout: its cuts come back from the caller's state
	}
	_ = eachEntry(fd, b.maxEntries, func(k, v []byte) {
		_ = mapUpdate(b.mapFD, k, v, updateNoExist)
	})
}

// Detach takes the program off dev, only if it is still ours there.
func (b *Backend) Detach(dev string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	a, known := b.devices[dev]
	delete(b.devices, dev)
	if !known || !a.XDP {
		return nil
	}
	return b.detach(a)
}

func (b *Backend) detach(a *attachment) error {
	if b.fwd != nil {
		b.fwd.remove(a.Name)
	}
	err := setXDP(b.nl, a.index, -1, xdpFlagDrvMode|xdpFlagReplace, int32(b.progFD))
	if errors.Is(err, unix.EINVAL) {
		// Before Linux 5.7: look, then detach.
		l, qerr := queryLink(b.nl, a.Name)
		if qerr != nil || l.progID != b.progID {
			return nil
		}
		err = setXDP(b.nl, a.index, -1, xdpFlagDrvMode, -1)
	}
	if errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENODEV) {
		return nil // another program took the device over, or the device is gone: nothing of ours there
	}
	if err != nil {
		return fmt.Errorf("detach XDP from %s: %s", a.Name, kernelMessage(err))
	}
	return nil
}

// Devices lists the devices Attach was asked for, by name.
func (b *Backend) Devices() []Device {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Device, 0, len(b.devices))
	for _, a := range b.devices {
		out = append(out, a.Device)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Cut adds tuples to the map; a tuple already cut keeps its counter.
func (b *Backend) Cut(tuples []cut.Tuple) error {
	mono, _ := clocks()
	v := value{cutNS: uint64(mono)}.encode(binary.NativeEndian)
	for _, t := range tuples {
		k, err := EncodeKey(t)
		if err != nil {
			return fmt.Errorf("cut %s: %w", t, err)
		}
		err = mapUpdate(b.mapFD, k[:], v, updateNoExist)
		switch {
		case err == nil, errors.Is(err, unix.EEXIST):
		case errors.Is(err, unix.E2BIG):
			return fmt.Errorf("cut %s: the XDP cut map is full (%d tuples); raise fastpath.main.cut_set_size", t, b.maxEntries)
		default:
			return fmt.Errorf("cut %s: %w", t, err)
		}
	}
	return nil
}

// Release removes tuples from the map and returns how many were there;
// frames in flight cannot bring them back, since the program never adds
// a key.
func (b *Backend) Release(tuples []cut.Tuple) (int, error) {
	n := 0
	for _, t := range tuples {
		k, err := EncodeKey(t)
		if err != nil {
			return n, fmt.Errorf("release %s: %w", t, err)
		}
		switch err := mapDelete(b.mapFD, k[:]); {
		case err == nil:
			n++
		case !errors.Is(err, unix.ENOENT):
			return n, fmt.Errorf("release %s: %w", t, err)
		}
	}
	return n, nil
}

// Lookup returns what the program recorded for one tuple, and whether it
// is cut.
func (b *Backend) Lookup(t cut.Tuple) (TupleStats, bool, error) {
	k, err := EncodeKey(t)
	if err != nil {
		return TupleStats{}, false, err
	}
	v := make([]byte, ValueSize)
	if err := mapLookup(b.mapFD, k[:], v); errors.Is(err, unix.ENOENT) {
		return TupleStats{Tuple: t}, false, nil
	} else if err != nil {
		return TupleStats{}, false, fmt.Errorf("look up %s: %w", t, err)
	}
	mono, wall := clocks()
	return decodeValue(v, binary.NativeEndian).stats(t, mono, wall), true, nil
}

// Stats lists every cut tuple with its frames and last frame, for expiry
// (release what has been quiet for cut_expiry) and status.
func (b *Backend) Stats() ([]TupleStats, error) {
	mono, wall := clocks()
	var out []TupleStats
	err := eachEntry(b.mapFD, b.maxEntries, func(kb, vb []byte) {
		var k Key
		copy(k[:], kb)
		t, err := k.Tuple()
		if err != nil {
			return // not a key Cut writes
		}
		out = append(out, decodeValue(vb, binary.NativeEndian).stats(t, mono, wall))
	})
	return out, err
}

// Expire releases the tuples whose last frame, or whose cut when no frame
// came, is older than expiry, and returns them: cut_expiry as the netdev
// table's set timeouts keep it. A frame that lands between the look and
// the delete is let through with the rest of the connection, as one just
// after a set element's timeout is. next is how long until the quietest
// tuple left would expire; 0 when none is left.
func (b *Backend) Expire(expiry time.Duration) (released []cut.Tuple, next time.Duration, err error) {
	mono, _ := clocks()
	released, oldest, err := b.expireBefore(mono - expiry)
	if oldest >= 0 {
		next = max(oldest+expiry-mono, time.Millisecond)
	}
	return released, next, err
}

// expireBefore releases what has been quiet since the monotonic time
// cutoff; oldest is the last activity of the quietest tuple it leaves, -1
// when it leaves none.
func (b *Backend) expireBefore(cutoff time.Duration) (released []cut.Tuple, oldest time.Duration, err error) {
	quiet := func(v []byte) bool { return decodeValue(v, binary.NativeEndian).lastActive() <= cutoff }
	var keys []Key
	oldest = -1
	err = eachEntry(b.mapFD, b.maxEntries, func(kb, vb []byte) {
		if quiet(vb) {
			var k Key
			copy(k[:], kb)
			keys = append(keys, k)
		} else if a := decodeValue(vb, binary.NativeEndian).lastActive(); oldest < 0 || a < oldest {
			oldest = a
		}
	})
	v := make([]byte, ValueSize)
	for _, k := range keys {
		// Look again just before the delete: a frame since the walk keeps it.
		if mapLookup(b.mapFD, k[:], v) != nil {
			continue
		}
		if !quiet(v) {
			if a := decodeValue(v, binary.NativeEndian).lastActive(); oldest < 0 || a < oldest {
				oldest = a
			}
			continue
		}
		if mapDelete(b.mapFD, k[:]) != nil {
			continue // released meanwhile
		}
		if t, terr := k.Tuple(); terr == nil {
			released = append(released, t)
		}
	}
	return released, oldest, err
}

// eachEntry walks a map, at most limit entries (a map that changes while it
// is walked may restart the walk; the bound keeps it finite).
func eachEntry(fd, limit int, fn func(k, v []byte)) error {
	key := make([]byte, KeySize)
	next := make([]byte, KeySize)
	v := make([]byte, ValueSize)
	var prev []byte
	for n := 0; n < limit; n++ {
		if err := mapNextKey(fd, prev, next); errors.Is(err, unix.ENOENT) {
			return nil
		} else if err != nil {
			return fmt.Errorf("walk the XDP cut map: %w", err)
		}
		copy(key, next)
		prev = key
		if err := mapLookup(fd, key, v); errors.Is(err, unix.ENOENT) {
			continue // released meanwhile
		} else if err != nil {
			return fmt.Errorf("read the XDP cut map: %w", err)
		}
		fn(key, v)
	}
	return nil
}

func clocks() (time.Duration, time.Time) {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return time.Duration(ts.Nano()), time.Now()
}

// Close detaches the program from every device where it is still ours and
// frees the map and the program.
func (b *Backend) Close() error { return b.close(true) }

// Leave closes the backend but leaves the program attached, dropping what
// its map holds, for the next run's Attach to take over with the cuts. A
// daemon restart uses it: on mtk_eth_soc and mvneta the first attach and
// the last detach of a program stop and reopen the port (link down, rings
// reallocated; mtk_eth_soc also stops its PPE), while replacing one
// program by another does not.
func (b *Backend) Leave() error { return b.close(false) }

func (b *Backend) close(detach bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []error
	for name, a := range b.devices {
		if a.XDP && detach {
			errs = append(errs, b.detach(a))
		}
		delete(b.devices, name)
	}
	for _, fd := range []*int{&b.progFD, &b.mapFD} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
	if b.fwd != nil {
		b.fwd.close()
		b.fwd = nil
	}
	if b.nl != nil {
		errs = append(errs, b.nl.Close())
		b.nl = nil
	}
	return errors.Join(errs...)
}
