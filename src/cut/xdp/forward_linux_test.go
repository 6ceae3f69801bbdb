//go:build linux && !mips && !mipsle

package xdp

import (
	"testing"

	"github.com/fastpath-wrt/fastpath/src/btf"
)

// The tests' bitfields (bitAt) sit where bitfieldOf puts a BTF member's
// for a kernel of either byte order: dir, xmit_type and encap_num of
// Linux 6.12's struct flow_offload_tuple, bits 400, 402 and 405.
func TestBitAtIsBitfieldOf(t *testing.T) {
	for _, o := range orders {
		for _, m := range []struct{ bit, width uint32 }{{400, 2}, {402, 3}, {405, 2}} {
			got, err := bitfieldOf(btf.Member{Offset: m.bit, Bits: m.width}, o.order)
			if err != nil {
				t.Fatal(err)
			}
			if want := bitAt(int16(m.bit/8), uint8(m.bit%8), uint8(m.width), o.order); got != want {
				t.Errorf("%s: bit %d of width %d: bitfieldOf %+v, bitAt %+v", o.name, m.bit, m.width, got, want)
			}
		}
	}
}
