package cut

import (
	"fmt"
	"strings"
	"time"
)

// Defaults and ranges of /etc/config/fastpath's cut options.
const (
	DefaultExpiry  = 10 * time.Second
	DefaultSetSize = 65536
	MaxExpiry      = 24 * time.Hour
	MaxSetSize     = 1 << 24
)

// Config is the cut part of /etc/config/fastpath.
type Config struct {
	Enabled    bool              `json:"enabled"`              // the cut feature at all (fastpath.main.enabled)
	InFastpath bool              `json:"in_fastpath"`          // cut_in_fastpath: drop in the netdev ingress path; off: only delete conntrack entries
	Expiry     time.Duration     `json:"expiry"`               // cut_expiry: how long a cut outlives its last frame
	SetSize    int               `json:"set_size"`             // cut_set_size: elements per set (IPv4, IPv6)
	Blocklists []BlocklistConfig `json:"blocklists,omitempty"` // config blocklist sections
}

// Blocklist kinds.
const (
	KindNftSet = "nftset"
	KindFile   = "file"
	KindList   = "list"
)

// BlocklistConfig is one `config blocklist` section.
type BlocklistConfig struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"`             // KindNftSet, KindFile or KindList
	Family    string   `json:"family,omitempty"` // nftset: table family (inet, ip, ip6, bridge, netdev, arp)
	Table     string   `json:"table,omitempty"`  // nftset
	Set       string   `json:"set,omitempty"`    // nftset
	Path      string   `json:"path,omitempty"`   // file
	Addresses []string `json:"addresses,omitempty"`
}

// DefaultConfig is what a missing /etc/config/fastpath means.
func DefaultConfig() Config {
	return Config{Enabled: true, InFastpath: true, Expiry: DefaultExpiry, SetSize: DefaultSetSize}
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
	case KindList:
	default:
		return fmt.Errorf("type %q: use nftset, file or list", b.Kind)
	}
	return nil
}
