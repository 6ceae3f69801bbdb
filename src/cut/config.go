package cut

import "time"

// Config is how the cut runs, from /etc/config/fastpath.
type Config struct {
	Enabled    bool              `json:"enabled"`
	InFastpath bool              `json:"in_fastpath"` // cut_in_fastpath
	Expiry     time.Duration     `json:"expiry"`      // cut_expiry: how long a cut outlives the last frame
	SetSize    int               `json:"set_size"`    // cut_set_size: elements per set (IPv4, IPv6)
	Blocklists []BlocklistConfig `json:"blocklists,omitempty"`
}

// BlocklistConfig is one `config blocklist` section.
type BlocklistConfig struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"` // nftset, file, list
	Family    string   `json:"family,omitempty"`
	Table     string   `json:"table,omitempty"`
	Set       string   `json:"set,omitempty"`
	Path      string   `json:"path,omitempty"`
	Addresses []string `json:"addresses,omitempty"`
}
