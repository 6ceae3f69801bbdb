package uci_test

import (
	"fmt"

	"github.com/fastpath-wrt/fastpath/src/uci"
)

func Example() {
	f, err := uci.Parse("/etc/config/firewall", []byte(`
config defaults
	option input 'REJECT'   # keep
	option flow_offloading '1'

config zone
	option name 'lan'
`))
	if err != nil {
		panic(err)
	}
	d, _ := f.Section("@defaults[0]")
	on, _ := d.Bool("flow_offloading", false)
	fmt.Println(d.Name, on)

	if err := f.Set("@defaults[0]", "flow_offloading_hw", "0"); err != nil {
		panic(err)
	}
	fmt.Print(string(f.Bytes()))
	// Output:
	// cfg01e63d true
	//
	// config defaults
	// 	option input 'REJECT'   # keep
	// 	option flow_offloading '1'
	// 	option flow_offloading_hw '0'
	//
	// config zone
	// 	option name 'lan'
}
