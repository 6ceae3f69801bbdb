package cut

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Defaults and ranges of /etc/config/fastpath's cut options.
const (
	DefaultExpiry  = 10 * time.Second
	DefaultSetSize = 65536
	MaxExpiry      = 24 * time.Hour
	MaxSetSize     = 1 << 24
	// The shortest prefixes cut unless a call forces it: a /8 is 1/256 of
	// the IPv4 Internet; 0.0.0.0/0 would cut every connection, the admin's
	// own among them.
	DefaultMinPrefix4 = 8
	DefaultMinPrefix6 = 16
)

// Config is the cut part of /etc/config/fastpath.
type Config struct {
	Enabled    bool          `json:"enabled"`     // the cut feature at all (fastpath.main.enabled)
	InFastpath bool          `json:"in_fastpath"` // cut_in_fastpath: drop in the netdev ingress path; off: only delete conntrack entries
	Expiry     time.Duration `json:"expiry"`      // cut_expiry: how long a cut outlives its last frame
	SetSize    int           `json:"set_size"`    // cut_set_size: elements per set (IPv4, IPv6)
	MinPrefix4 int           `json:"min_prefix4"` // cut_min_prefix4: shorter IPv4 prefixes are not cut unless forced
	MinPrefix6 int           `json:"min_prefix6"` // cut_min_prefix6
	Backend    string        `json:"backend"`     // cut_backend: BackendAuto, BackendXDP or BackendNetdev
	// XDPForward adds forwarding to the XDP program (xdp_forward, as the
	// plan allows it): the cut and the forward share a device's one XDP
	// slot, and the cut must come first.
	XDPForward bool              `json:"xdp_forward,omitempty"`
	Blocklists []BlocklistConfig `json:"blocklists,omitempty"` // config blocklist sections
}

// Cut backends (cut_backend): where a device drops the frames of a cut.
const (
	BackendAuto   = "auto"   // native XDP where the driver has it, else netdev ingress
	BackendXDP    = "xdp"    // as auto, and a device that cannot run XDP is a warning
	BackendNetdev = "netdev" // the netdev ingress table on every device
)

// Blocklist kinds.
const (
	KindNftSet = "nftset"
	KindFile   = "file"
	KindList   = "list"
	// Presets: every block set of a tool, followed as it makes and drops
	// them (package blocklist, presets.go).
	KindBanIP    = "banip"    // banIP 1.8: each <feed>.v4 and <feed>.v6 set of table inet banIP but the allowlist's
	KindCrowdSec = "crowdsec" // CrowdSec's firewall bouncer: ip crowdsec crowdsec-blacklists, ip6 crowdsec6 crowdsec6-blacklists
)

// BlocklistConfig is one `config blocklist` section.
type BlocklistConfig struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"`             // KindNftSet, KindFile, KindList, KindBanIP or KindCrowdSec
	Family    string   `json:"family,omitempty"` // nftset: table family (inet, ip, ip6, bridge, netdev, arp)
	Table     string   `json:"table,omitempty"`  // nftset
	Set       string   `json:"set,omitempty"`    // nftset
	Path      string   `json:"path,omitempty"`   // file
	Addresses []string `json:"addresses,omitempty"`
}

// DefaultConfig is what a missing /etc/config/fastpath means.
func DefaultConfig() Config {
	return Config{Enabled: true, InFastpath: true, Expiry: DefaultExpiry, SetSize: DefaultSetSize, Backend: BackendAuto}
}

// Normalized fills zero values with defaults and checks the ranges the
// kernel accepts, naming the option to fix.
func (c Config) Normalized() (Config, error) {
	if c.Expiry == 0 {
		c.Expiry = DefaultExpiry
	}
	if c.SetSize == 0 {
		c.SetSize = DefaultSetSize
	}
	if c.MinPrefix4 == 0 {
		c.MinPrefix4 = DefaultMinPrefix4
	}
	if c.MinPrefix6 == 0 {
		c.MinPrefix6 = DefaultMinPrefix6
	}
	switch c.Backend {
	case "":
		c.Backend = BackendAuto
	case BackendAuto, BackendXDP, BackendNetdev:
	default:
		return c, fmt.Errorf("fastpath.main.cut_backend=%q: use auto, xdp or netdev", c.Backend)
	}
	if c.MinPrefix4 < 1 || c.MinPrefix4 > 32 {
		return c, fmt.Errorf("fastpath.main.cut_min_prefix4=%d: use 1 to 32", c.MinPrefix4)
	}
	if c.MinPrefix6 < 1 || c.MinPrefix6 > 128 {
		return c, fmt.Errorf("fastpath.main.cut_min_prefix6=%d: use 1 to 128", c.MinPrefix6)
	}
	if c.Expiry < time.Second || c.Expiry > MaxExpiry {
		return c, fmt.Errorf("fastpath.main.cut_expiry=%v: use whole seconds from 1 to 86400", c.Expiry)
	}
	if c.Expiry%time.Second != 0 {
		// Timeouts are whole seconds in the rendered rule; keep text and
		// kernel in step.
		c.Expiry = c.Expiry.Round(time.Second)
	}
	if c.SetSize < 1 || c.SetSize > MaxSetSize {
		return c, fmt.Errorf("fastpath.main.cut_set_size=%d: use 1 to 16777216", c.SetSize)
	}
	for i, b := range c.Blocklists {
		if err := b.Check(); err != nil {
			return c, fmt.Errorf("blocklist #%d (%q): %w", i+1, b.Name, err)
		}
	}
	return c, nil
}

// Equal reports whether c and o are the same settings. (reflect.DeepEqual
// would do, at some 6 KB of the mips binary.)
func (c Config) Equal(o Config) bool {
	if c.Enabled != o.Enabled || c.InFastpath != o.InFastpath || c.Expiry != o.Expiry || c.SetSize != o.SetSize ||
		c.MinPrefix4 != o.MinPrefix4 || c.MinPrefix6 != o.MinPrefix6 || c.Backend != o.Backend || c.XDPForward != o.XDPForward || len(c.Blocklists) != len(o.Blocklists) {
		return false
	}
	for i, b := range c.Blocklists {
		p := o.Blocklists[i]
		if b.Name != p.Name || b.Kind != p.Kind || b.Family != p.Family || b.Table != p.Table || b.Set != p.Set ||
			b.Path != p.Path || !slices.Equal(b.Addresses, p.Addresses) {
			return false
		}
	}
	return true
}

// MinBits is the shortest prefix of a family that is cut unless forced
// (on a normalized config), and the option that sets it.
func (c Config) MinBits(v6 bool) (int, string) {
	if v6 {
		return c.MinPrefix6, "cut_min_prefix6"
	}
	return c.MinPrefix4, "cut_min_prefix4"
}

// CheckWidth refuses a prefix shorter than the minimum of its family.
func (c Config) CheckWidth(p netip.Prefix) error {
	min, opt := c.MinBits(p.Addr().Is6())
	if p.Bits() >= min {
		return nil
	}
	return &RefusedError{Field: "address", Problem: fmt.Sprintf("%s is shorter than /%d (fastpath.main.%s): it would cut every connection in it", p, min, opt),
		Fix: "cut a narrower prefix, pass force to cut it anyway, or lower " + opt}
}

// RefusedError is a cut the rules refuse, with the argument to change.
type RefusedError struct{ Field, Problem, Fix string }

func (e *RefusedError) Error() string { return e.Field + ": " + e.Problem + " (" + e.Fix + ")" }

// Check says what a block list lacks, naming the option to set.
func (b BlocklistConfig) Check() error {
	switch b.Kind {
	case KindNftSet:
		if b.Family == "" || b.Table == "" || b.Set == "" {
			return fmt.Errorf("type nftset needs options family, table and set")
		}
	case KindFile:
		if !strings.HasPrefix(b.Path, "/") {
			return fmt.Errorf("type file needs option path, an absolute file name (got %q)", b.Path)
		}
	case KindBanIP, KindCrowdSec:
		if b.Table != "" || b.Set != "" {
			return fmt.Errorf("type %s finds the tool's sets by itself: drop options table and set (or use type nftset for one set)", b.Kind)
		}
	case KindList:
	default:
		return fmt.Errorf("type %q: use nftset, banip, crowdsec, file or list", b.Kind)
	}
	return nil
}
