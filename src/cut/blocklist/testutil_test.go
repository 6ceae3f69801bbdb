package blocklist

import "github.com/fastpath-wrt/fastpath/src/cut"

func cutList(name string) cut.BlocklistConfig {
	return cut.BlocklistConfig{Name: name, Kind: cut.KindList}
}
