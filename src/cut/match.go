package cut

import (
	"net/netip"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// Names reports whether t is either direction of the cut connection, as
// seen from either side.
func (c Cut) Names(t Tuple) bool {
	r := t.Reverse()
	return c.Original.Equal(t) || c.Reply.Equal(t) || c.Original.Equal(r) || c.Reply.Equal(r)
}

// HasAddressIn reports whether an end of the cut connection, before or
// after NAT, lies in p.
func (c Cut) HasAddressIn(p netip.Prefix) bool {
	return netstate.HasAddressIn(c.Original, c.Reply, p)
}
