package cut

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Names of the kernel objects the cut owns.
const (
	TableName = "fastpath_cut" // family netdev
	SetName4  = "cut4"
	SetName6  = "cut6"
	// The released sets hold the tuples of cuts just released, for a little
	// longer than a cut outlives its last frame (see ReleasedTimeout).
	ReleasedName4 = "released4"
	ReleasedName6 = "released6"
	ChainPrefix   = "in_"
	// Priority runs the cut before the flowtable's ingress hook (0):
	// netdev ingress hooks run lowest number first.
	Priority = -500
)

// ChainName is the ingress chain of one device. Characters nft's grammar
// does not allow in a bare name become '_'.
func ChainName(device string) string {
	var b strings.Builder
	b.WriteString(ChainPrefix)
	for _, r := range device {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// SortedDevices returns the devices sorted, without blanks and duplicates.
func SortedDevices(devices []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range devices {
		if d != "" && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// key4 and key6 are the 5-tuples of the sets, in the order of their keys.
const (
	key4 = "ip saddr . ip daddr . meta l4proto . th sport . th dport"
	key6 = "ip6 saddr . ip6 daddr . meta l4proto . th sport . th dport"
)

// Render returns the table as nft text, as it stands while a cut is
// active: the sets are always there, the ingress chains only while the sets
// hold a cut, so no frame pays for the lookup otherwise. With the cut
// disabled or not in the fast path there is no table: the text says so in
// a comment. Non-first fragments and PPPoE-encapsulated frames carry no
// transport header where the rule looks, so they never match.
func Render(devices []string, cfg Config) string {
	var b strings.Builder
	if !cfg.Enabled || !cfg.InFastpath {
		fmt.Fprintf(&b, "# table netdev %s: not in use (cut_in_fastpath off or cut disabled); a cut deletes conntrack entries only\n", TableName)
		return b.String()
	}
	if cfg.Expiry == 0 {
		cfg.Expiry = DefaultExpiry
	}
	if cfg.SetSize == 0 {
		cfg.SetSize = DefaultSetSize
	}
	timeout := seconds(cfg.Expiry)
	fmt.Fprintf(&b, "table netdev %s {\n", TableName)
	for _, s := range []struct {
		name, addr string
		released   bool
	}{{SetName4, "ipv4_addr", false}, {SetName6, "ipv6_addr", false}, {ReleasedName4, "ipv4_addr", true}, {ReleasedName6, "ipv6_addr", true}} {
		fmt.Fprintf(&b, "\tset %s {\n", s.name)
		fmt.Fprintf(&b, "\t\ttype %s . %s . inet_proto . inet_service . inet_service\n", s.addr, s.addr)
		fmt.Fprintf(&b, "\t\tsize %d\n", cfg.SetSize)
		if s.released {
			// A default timeout implies flags timeout; nft lists it this way.
			fmt.Fprintf(&b, "\t\ttimeout %s\n", seconds(ReleasedTimeout(cfg.Expiry)))
		} else {
			fmt.Fprintf(&b, "\t\tflags dynamic,timeout\n")
			fmt.Fprintf(&b, "\t\tcounter\n")
			fmt.Fprintf(&b, "\t\ttimeout %s\n", timeout)
		}
		fmt.Fprintf(&b, "\t}\n\n")
	}
	devs := SortedDevices(devices)
	if len(devs) > 0 {
		b.WriteString("\t# the ingress chains are attached only while a cut is in the sets\n")
	}
	for _, d := range devs {
		fmt.Fprintf(&b, "\tchain %s {\n", ChainName(d))
		fmt.Fprintf(&b, "\t\ttype filter hook ingress device %q priority %d; policy accept;\n", d, Priority)
		// Look the frame up first: an update alone would add every frame's
		// tuple to the set. A tuple just released is left alone (see
		// ReleasedTimeout). On a hit, refresh the timeout and drop.
		fmt.Fprintf(&b, "\t\tmeta protocol ip %s @%s %s != @%s update @%s { %s timeout %s } drop\n", key4, SetName4, key4, ReleasedName4, SetName4, key4, timeout)
		fmt.Fprintf(&b, "\t\tmeta protocol ip6 %s @%s %s != @%s update @%s { %s timeout %s } drop\n", key6, SetName6, key6, ReleasedName6, SetName6, key6, timeout)
		fmt.Fprintf(&b, "\t}\n")
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n\n") + "\n}\n"
}

// ReleasedTimeout is how long a released tuple stays in the released set.
//
// Why a released set: the cut rule's dynset update adds the element when it
// is missing. A frame that passed the lookup on the cut set just before a
// release's delete committed reaches its update after the element left the
// hash table (the commit removes it right after the generation flips, while
// packet-path readers of the old generation still run), so it adds the
// element back, and a flood would keep it alive for good. No dynset
// operation refreshes only what exists, so the rule checks a second set: a
// release adds the tuple to the released set and deletes it from the cut
// set in one transaction. A frame that reads the new generation at either
// lookup stops there (cut set: miss; released set: hit). One that read the
// old generation at both may still re-add the element once, but from then
// on every frame of that tuple hits the released set: it is neither dropped
// nor refreshed, and the element expires after one cut_expiry. The
// released element outlives it by a margin, so no release is undone by
// frames in flight, on any kernel with inverted lookups (all of them;
// Linux 6.1 and OpenWrt included), without waiting or retrying.
func ReleasedTimeout(expiry time.Duration) time.Duration {
	return expiry.Round(time.Second) + releasedMargin
}

// releasedMargin covers the jiffy rounding of timeouts and the one rule
// evaluation a frame in flight may take after the release committed.
const releasedMargin = 2 * time.Second

// seconds formats a duration the way nft writes timeouts ("10s", "1m30s").
func seconds(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s < 1 {
		s = 1
	}
	var b strings.Builder
	if h := s / 3600; h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m := s % 3600 / 60; m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if r := s % 60; r > 0 {
		fmt.Fprintf(&b, "%ds", r)
	}
	return b.String()
}
