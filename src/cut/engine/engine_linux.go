//go:build linux

package engine

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/cut/blocklist"
	"github.com/fastpath-wrt/fastpath/src/cut/xdp"
	"github.com/fastpath-wrt/fastpath/src/logger"
	"github.com/fastpath-wrt/fastpath/src/nftevents"
	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Engine owns table netdev fastpath_cut and the cuts in it. Its methods
// are safe for concurrent use.
type Engine struct {
	mu  sync.Mutex
	ct  *conntrack.Client
	nft *nftables.Conn
	log *logger.Entry

	cfg      cut.Config
	devices  []string
	synced   bool
	inFast   bool   // the table is in place and cuts go there
	reason   string // why inFast is what it is
	warnings []string
	recent   []string // fallbacks of recent cuts (set full, EBUSY), newest last

	table *nftables.Table
	set4  *nftables.Set
	set6  *nftables.Set
	rel4  *nftables.Set // released4: see cut.ReleasedTimeout
	rel6  *nftables.Set
	cuts  map[string]*record // by cut.Tuple.String() of the original tuple
	// released holds the tuples in the released sets and when their mark
	// expires; nil until the first Sync has read them from the kernel.
	released map[string]time.Time
	// lists are what the block lists of the latest watch hold; apart from
	// mu (they have a lock of their own, taken after mu): a block-list
	// pass reads them on every flow while mu is taken for each batch of
	// inserts.
	lists  atomic.Pointer[blocklist.Lists]
	events *nftevents.Hub // the daemon's nftables notifications; nil: a socket per watch
	nowFn  func() time.Time

	hooked     map[string]bool // chain names attached in the kernel
	chainFails map[string]bool // devices whose chain the kernel refused
	idleGen    uint64          // the idle check that counts; older timers do nothing
	idleDue    time.Time       // when it runs; zero when none is scheduled

	// cutIDs are the conntrack ids of entries cut, until their destroy
	// event: a late new event of one is not a new connection.
	cutIDs map[uint32]struct{}
	rt     *netlink.Conn       // rtnetlink, for the router's own addresses
	lookup *netlink.Conn       // nftables, for exact element lookups (lookupTuples)
	own    map[netip.Addr]bool // the router's addresses: connections of its own are not cut unless asked

	xdp   xdpSide // the devices that cut in their driver (backend_linux.go)
	netNS int     // the network namespace NewEngine ran in, for the XDP backend's rtnetlink

	afterInsert  func(cuts int)    // tests: called once a batch of cuts is in the sets
	afterRelease func(t cut.Tuple) // tests: called once a release of t committed
	beforeFinish func()            // tests: called by a block-list pass between its inserts and its conntrack deletes
	beforeNewCut func()            // tests: called between a new connection's look at the lists and its cut
}

// record is what the kernel's elements do not say about a cut.
type record struct {
	cut.Cut
	keys []string // element tuples in the sets: original, reply
}

// maxRecent bounds the fallback messages kept for the summary.
const maxRecent = 20

// NewEngine opens a netlink connection to nftables in the current network
// namespace. ct is used to find and delete the conntrack entries of cut
// connections. Call Sync before cutting.
func NewEngine(ct *conntrack.Client, log *logger.Entry) (*Engine, error) {
	if ct == nil {
		return nil, errors.New("cut engine: a conntrack client is required")
	}
	if log == nil {
		log = logger.Default()
	}
	conn, err := nftables.New(nftables.AsLasting())
	if err != nil {
		return nil, fmt.Errorf("cut engine: open nftables netlink: %w", err)
	}
	rt, err := netlink.Dial(unix.NETLINK_ROUTE, nil)
	if err != nil {
		conn.CloseLasting()
		return nil, fmt.Errorf("cut engine: open rtnetlink: %w", err)
	}
	lookup, err := netlink.Dial(unix.NETLINK_NETFILTER, nil)
	if err != nil {
		conn.CloseLasting()
		rt.Close()
		return nil, fmt.Errorf("cut engine: open nftables netlink: %w", err)
	}
	// The sockets above act in this namespace; so must the XDP backend,
	// opened later by Sync from whatever thread runs it.
	ns, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		ns = -1 // kernels before 3.17 lack thread-self: the XDP backend uses the caller's namespace
	}
	return &Engine{
		netNS:      ns,
		rt:         rt,
		lookup:     lookup,
		cutIDs:     map[uint32]struct{}{},
		ct:         ct,
		nft:        conn,
		log:        log,
		cfg:        cut.DefaultConfig(),
		cuts:       map[string]*record{},
		nowFn:      time.Now,
		hooked:     map[string]bool{},
		chainFails: map[string]bool{},
	}, nil
}

// Sync makes the table and its sets match cfg and records devices. The
// ingress chains, one per device, are attached only while the sets hold
// cuts (the first insert attaches them, the idle check detaches them):
// Sync brings attached chains up to date with devices, attaches them when
// elements outlived a restart, and otherwise removes them. It is
// idempotent: with nothing changed it sends nothing that touches live
// elements. A change of cut_expiry or cut_set_size re-creates the sets,
// which resets active cuts. A kernel without the netdev family leaves cuts to conntrack
// deletion; the summary's reason says so and Sync returns nil.
func (e *Engine) Sync(devices []string, cfg cut.Config) error {
	cfg, err := cfg.Normalized()
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cfg = cfg
	e.readOwnAddrs()
	e.devices = cut.SortedDevices(devices)
	e.synced = true
	e.warnings = nil
	e.chainFails = map[string]bool{}

	if !cfg.Enabled || !cfg.InFastpath {
		e.inFast = false
		e.reason = "cut_in_fastpath is off: a cut deletes the conntrack entry only"
		if !cfg.Enabled {
			e.reason = "fastpath is disabled"
		}
		return errors.Join(e.closeXDP(), e.removeTable())
	}

	table := &nftables.Table{Family: nftables.TableFamilyNetdev, Name: cut.TableName}
	set4, err := setFor(table, false, cfg)
	if err != nil {
		return err
	}
	set6, err := setFor(table, true, cfg)
	if err != nil {
		return err
	}
	rel4, err := releasedSetFor(table, false, cfg)
	if err != nil {
		return err
	}
	rel6, err := releasedSetFor(table, true, cfg)
	if err != nil {
		return err
	}
	fresh, err := e.ensureSets(table, []*nftables.Set{set4, set6, rel4, rel6})
	if err != nil {
		e.inFast = false
		e.hooked = map[string]bool{}
		e.stopIdleCheck()
		e.closeXDP()
		if isNoNetdev(err) {
			e.reason = "this kernel has no nftables netdev family (CONFIG_NF_TABLES_NETDEV, OpenWrt package kmod-nft-netdev): a cut deletes the conntrack entry only"
			e.log.Warn(e.reason)
			return nil
		}
		e.reason = "the cut table could not be created: " + err.Error()
		return fmt.Errorf("cut: create table netdev %s: %w", cut.TableName, err)
	}
	e.table, e.set4, e.set6, e.rel4, e.rel6 = table, set4, set6, rel4, rel6
	if fresh {
		e.cuts = map[string]*record{}
		e.hooked = map[string]bool{} // went with the old table
		e.released = map[string]time.Time{}
	}
	if e.released == nil {
		e.readReleased()
	}
	e.inFast = true
	e.syncBackends()
	e.syncAttachment()
	e.reason = fmt.Sprintf("cut_in_fastpath is on: cut connections are dropped at ingress (priority %d) on %d device(s)", cut.Priority, len(e.devices))
	if n := len(e.xdp.runs); n > 0 {
		e.reason = fmt.Sprintf("cut_in_fastpath is on: cut connections are dropped by native XDP in the driver on %d device(s), at netdev ingress (priority %d) on %d", n, cut.Priority, len(e.devices)-n)
	}
	if len(e.devices) == 0 {
		e.reason = "cut_in_fastpath is on, but there are no flowtable devices yet: cut connections are dropped once there are"
	}
	return nil
}

// ensureSets creates the table and sets, or re-creates them when one is
// missing or its size or timeout differ. fresh reports that the sets are
// new and empty.
func (e *Engine) ensureSets(table *nftables.Table, sets []*nftables.Set) (fresh bool, err error) {
	_, err = e.nft.ListTableOfFamily(cut.TableName, nftables.TableFamilyNetdev)
	exists := err == nil
	if exists {
		same := true
		for _, want := range sets {
			have, gerr := e.nft.GetSetByName(table, want.Name)
			if gerr != nil || have.Size != want.Size || have.Timeout != want.Timeout || have.Dynamic != want.Dynamic || !have.HasTimeout {
				same = false
			}
		}
		if same {
			return false, nil
		}
		e.log.Warn("cut: cut_expiry or cut_set_size changed (or the table is of an older layout): re-creating the cut sets; active cuts are reset")
		e.nft.DelTable(table)
		if err := e.nft.Flush(); err != nil {
			return false, err
		}
	}
	e.nft.AddTable(table)
	for _, s := range sets {
		if err := e.nft.AddSet(s, nil); err != nil {
			return false, err
		}
	}
	return true, e.nft.Flush()
}

// readReleased learns the released marks an earlier run left, so a new
// cut of such a tuple clears its mark first. The caller holds e.mu.
func (e *Engine) readReleased() {
	e.released = map[string]time.Time{}
	now := e.nowFn()
	for _, set := range []*nftables.Set{e.rel4, e.rel6} {
		els, err := e.nft.GetSetElements(set)
		if err != nil {
			e.warn(fmt.Sprintf("cut: read set %s: %v", set.Name, err))
			continue
		}
		for _, el := range els {
			if t, err := cut.DecodeKey(el.Key); err == nil {
				e.released[t.String()] = now.Add(el.Expires)
			}
		}
	}
}

// removeTable deletes the table if it is there.
func (e *Engine) removeTable() error {
	e.cuts = map[string]*record{}
	e.hooked = map[string]bool{}
	e.released = nil
	e.stopIdleCheck()
	if _, err := e.nft.ListTableOfFamily(cut.TableName, nftables.TableFamilyNetdev); err != nil {
		return nil
	}
	e.nft.DelTable(&nftables.Table{Family: nftables.TableFamilyNetdev, Name: cut.TableName})
	if err := e.nft.Flush(); err != nil {
		return fmt.Errorf("cut: remove table netdev %s: %w", cut.TableName, err)
	}
	return nil
}

// Cleanup removes the table and closes the netlink connection.
func (e *Engine) Cleanup() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inFast = false
	err := errors.Join(e.closeXDP(), e.removeTable())
	if cleared, lerr := xdp.DetachLeftovers(max(e.netNS, 0)); lerr != nil {
		err = errors.Join(err, fmt.Errorf("cut: %w", lerr))
	} else if len(cleared) > 0 {
		e.log.WithField("devices", strings.Join(cleared, ",")).Info("cut: detached the XDP cut program an earlier run left")
	}
	if cerr := e.nft.CloseLasting(); err == nil {
		err = cerr
	}
	e.rt.Close()
	e.lookup.Close()
	return err
}

// Close detaches the XDP cut program and frees its map, leaving the netdev
// table in place: the daemon ends, and nothing would expire the XDP
// map's cuts; the table's elements expire by themselves.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.netNS >= 0 {
		unix.Close(e.netNS)
		e.netNS = -1
	}
	return e.closeXDP()
}

// isNoNetdev recognises the kernel's answer when the netdev family of
// nftables is not built.
func isNoNetdev(err error) bool {
	return errors.Is(err, unix.EAFNOSUPPORT) || errors.Is(err, unix.EOPNOTSUPP)
}

// isSetFull recognises a set at its size limit.
func isSetFull(err error) bool {
	return errors.Is(err, unix.ENFILE) || errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.E2BIG)
}

func (e *Engine) note(msg string) {
	e.log.Warn(msg)
	e.recent = append(e.recent, msg)
	if len(e.recent) > maxRecent {
		e.recent = e.recent[len(e.recent)-maxRecent:]
	}
}
