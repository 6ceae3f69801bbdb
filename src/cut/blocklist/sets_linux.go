//go:build linux

package blocklist

import (
	"fmt"
	"sort"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// setReader reads sets in the network namespace the watch was opened
// in: its sockets are made there, so a read later on any thread (a
// goroutine of Run) still reads that namespace's sets.
type setReader struct {
	nft  *nftables.Conn
	dump *netlink.Conn
}

func openSetReader() (*setReader, error) {
	nft, err := nftables.New(nftables.AsLasting())
	if err != nil {
		return nil, err
	}
	dump, err := netlink.Dial(unix.NETLINK_NETFILTER, nil)
	if err != nil {
		nft.CloseLasting()
		return nil, err
	}
	return &setReader{nft, dump}, nil
}

func (r *setReader) close() {
	r.nft.CloseLasting()
	r.dump.Close()
}

// setContent is what a read of a set found: the changes that load its
// list, folded from the elements as the dump streamed them, or, for a
// set over its bound, the elements themselves (boundElems picks which
// are followed).
type setContent struct {
	interval bool
	changes  []pointChange
	problems []string // of elements that are not addresses
	soonest  soonest  // the elements' earliest expiry
	els      []rawElem
}

// readSet reads a watched nftables set through a dump, with room for
// size changes (what the list held: a read again finds about as many);
// problem says why it could not.
func (r *setReader) readSet(b cut.BlocklistConfig, size int) (c setContent, problem string) {
	t := &nftables.Table{Name: b.Table, Family: nftables.TableFamily(nftFamilies[b.Family])}
	set, err := r.nft.GetSetByName(t, b.Set)
	if err == nil {
		c.interval = set.Interval
		limit := cut.MaxListEntries
		if c.interval {
			limit *= 2 // a start and an end each
		}
		c.changes = make([]pointChange, 0, size)
		n := 0
		err = walkSetElements(r.dump, nftFamilies[b.Family], b.Table, b.Set, func(el rawElem) {
			if n++; n > limit {
				return // read again as elements below
			}
			c.changes, c.problems = appendPointChanges(c.changes, c.problems, el, true)
			c.soonest.add(el)
		})
		if err == nil && n > limit {
			c = setContent{interval: c.interval}
			c.els, err = dumpSetElements(r.dump, nftFamilies[b.Family], b.Table, b.Set)
		}
		if err == nil {
			return c, ""
		}
	}
	return setContent{}, fmt.Sprintf("set %s %s %s: %v (watching for it; additions are cut once it exists)", b.Family, b.Table, b.Set, err)
}

// affected is the lists a notification touches: a watched set's, and
// for a preset the list of the set it names, made when a NEWSET brings a
// set it follows. The caller holds the lists.
func (w *Watch) affected(ev setEvent) []*listState {
	ls := w.lists
	var out []*listState
	for _, b := range w.nft {
		if ev.Family == nftFamilies[b.Family] && ev.Table == b.Table && (ev.Kind == tableDeleted || ev.Set == b.Set) {
			out = append(out, ls.byName[b.Name])
		}
	}
	for _, p := range w.presets {
		for _, t := range p.tables {
			if ev.Family != nftFamilies[t.family] || ev.Table != t.table {
				continue
			}
			if ev.Kind == tableDeleted {
				for _, name := range sortedKeys(ls.byName) {
					if l := ls.byName[name]; l.parent == p && l.cfg.Table == t.table && l.cfg.Family == t.family {
						out = append(out, l)
					}
				}
				continue
			}
			if !t.blocks(ev.Set) {
				continue
			}
			l := ls.byName[p.childName(ev.Set)]
			if l == nil && ev.Kind == setAdded {
				l = ls.adopt(p, t, ev.Set)
			}
			if l != nil {
				out = append(out, l)
			}
		}
	}
	return out
}

// adopt makes the list of a set p follows, unless p follows too many
// already. The caller holds the lists.
func (ls *Lists) adopt(p *preset, t presetTable, set string) *listState {
	own := ls.byName[p.cfg.Name]
	if childCount(ls.byName, p) >= maxPresetSets {
		own.problems = boundedProblems(own.problems, []string{p.tooMany(set)})
		return nil
	}
	l := p.child(t, set, own.minBits)
	ls.byName[l.cfg.Name] = l
	ls.regroup = true
	return l
}

// presetSet is a set a preset follows, as the kernel has it now.
type presetSet struct {
	t   presetTable
	set string
}

// presetSets lists the sets of p's tables that it follows; a table that
// does not exist has none.
func (r *setReader) presetSets(p *preset) []presetSet {
	var out []presetSet
	for _, t := range p.tables {
		sets, err := r.nft.GetSets(&nftables.Table{Name: t.table, Family: nftables.TableFamily(nftFamilies[t.family])})
		if err != nil {
			continue
		}
		for _, s := range sets {
			if t.blocks(s.Name) {
				out = append(out, presetSet{t, s.Name})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].set < out[j].set })
	return out
}

// follow makes the lists of the sets p follows now and drops those of
// sets gone. The caller holds the lists.
func (ls *Lists) follow(p *preset, now []presetSet) delta {
	var d delta
	keep := map[string]bool{}
	for _, s := range now {
		name := p.childName(s.set)
		if ls.byName[name] != nil || ls.adopt(p, s.t, s.set) != nil {
			keep[name] = true
		}
	}
	for name, l := range ls.byName {
		if l.parent == p && !keep[name] {
			d.join(l.replace(Set{}, 0))
			ls.drop(name)
		}
	}
	ls.changed(d)
	return d
}

// readSets reads every followed set: the sets of each preset as they are
// now, then each set's elements.
func (w *Watch) readSets() delta {
	ls := w.lists
	var d delta
	for _, p := range w.presets {
		now := w.read.presetSets(p)
		ls.mu.Lock()
		d.join(ls.follow(p, now))
		ls.mu.Unlock()
	}
	for _, l := range ls.setLists(func(*listState) bool { return true }) {
		d.join(ls.refresh(w.read, l))
	}
	return d
}

// setLists is the lists of nftables sets that pass keep, by name.
func (ls *Lists) setLists(keep func(*listState) bool) []*listState {
	ls.mu.RLock()
	defer ls.mu.RUnlock()
	var out []*listState
	for _, name := range sortedKeys(ls.byName) {
		l := ls.byName[name]
		if _, ok := nftFamilies[l.cfg.Family]; ok && l.cfg.Set != "" && keep(l) {
			out = append(out, l)
		}
	}
	return out
}

// refresh reads l's set again and puts what it holds in the list; the
// caller holds no lock (a dump of a large set takes a while). A preset's
// set that is gone drops its list.
func (ls *Lists) refresh(r *setReader, l *listState) delta {
	ls.mu.Lock()
	size := l.size()
	if ls.byName[l.cfg.Name] == l {
		// Whatever the read finds replaces the points: let them go now,
		// not beside the new ones (its count is kept for reports).
		l.countNow()
		l.pts = [2]pointSet{}
	}
	ls.mu.Unlock()
	start := time.Now()
	c, problem := r.readSet(l.cfg, size)
	end := time.Now()
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.byName[l.cfg.Name] != l {
		return delta{} // dropped meanwhile
	}
	var d delta
	switch {
	case problem != "" && l.parent != nil:
		d = l.replace(Set{}, 0)
		ls.drop(l.cfg.Name)
	case problem != "":
		d = l.replace(Set{}, 0)
		l.pts, l.pending, l.reset = [2]pointSet{}, nil, false
		l.problems, l.exp = []string{problem}, expiry{}
	case c.els != nil:
		els, bound := boundElems(c.els, c.interval, l.cfg.Name)
		d, l.problems = l.load(els, c.interval)
		if bound != "" {
			l.problems = append(l.problems, bound)
		}
		l.exp.loaded(els, start, end)
	default:
		d, l.problems = l.loadChanges(c.changes, c.interval), c.problems
		l.exp.loadedSoonest(c.soonest, start, end)
	}
	ls.changed(d)
	return d
}

// nextReread is when the first set with timeouts is due to be read
// again; zero: none is.
func (ls *Lists) nextReread() time.Time {
	ls.mu.RLock()
	defer ls.mu.RUnlock()
	var next time.Time
	for _, l := range ls.byName {
		if t := l.exp.due(); !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}

// rereadDue reads again the sets whose elements expired: their diff
// releases what the kernel dropped without a word.
func (w *Watch) rereadDue(removed func()) {
	now := time.Now()
	due := w.lists.setLists(func(l *listState) bool {
		t := l.exp.due()
		return !t.IsZero() && !t.After(now)
	})
	var d delta
	for _, l := range due {
		d.join(w.lists.refresh(w.read, l))
	}
	w.changed(d, removed)
}

// rereadTimer fires when the next set is due to be read again.
type rereadTimer struct{ t *time.Timer }

func newRereadTimer() *rereadTimer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &rereadTimer{t}
}

// arm sets the timer to at; zero stops it.
func (r *rereadTimer) arm(at time.Time) {
	if at.IsZero() {
		r.t.Stop()
		return
	}
	r.t.Reset(max(time.Until(at), 0))
}

func (r *rereadTimer) c() <-chan time.Time { return r.t.C }

func (r *rereadTimer) stop() { r.t.Stop() }
