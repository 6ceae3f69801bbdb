package rpc

import "github.com/fastpath-wrt/fastpath/src/ubus"

// ObjectName is the ubus object's name.
const ObjectName = "fastpath"

// ReadMethods only report; a read-only rpcd session may call them.
var ReadMethods = []string{"status", "capabilities", "flows", "cuts", "why"}

// WriteMethods change the router; rpcd grants them with write access only.
var WriteMethods = []string{"set", "reload", "cut", "uncut", "verdict"}

var tupleArgs = []ubus.Arg{
	{Name: "proto", Type: ubus.TypeString},
	{Name: "src", Type: ubus.TypeString},
	{Name: "dst", Type: ubus.TypeString},
	{Name: "sport", Type: ubus.TypeInt32},
	{Name: "dport", Type: ubus.TypeInt32},
}

// signatures are the methods' arguments as `ubus -v list fastpath` shows.
var signatures = map[string][]ubus.Arg{
	"status":       nil,
	"capabilities": nil,
	"flows": {
		{Name: "offload", Type: ubus.TypeString},
		{Name: "proto", Type: ubus.TypeString},
		{Name: "address", Type: ubus.TypeString},
		{Name: "limit", Type: ubus.TypeInt32},
	},
	"set":    {{Name: "mode", Type: ubus.TypeString}},
	"reload": nil,
	"cut": append([]ubus.Arg{{Name: "address", Type: ubus.TypeString}}, append(tupleArgs[:5:5],
		ubus.Arg{Name: "reason", Type: ubus.TypeString},
		ubus.Arg{Name: "force", Type: ubus.TypeBool},
		ubus.Arg{Name: "local", Type: ubus.TypeBool})...),
	"uncut": append([]ubus.Arg{{Name: "address", Type: ubus.TypeString}}, tupleArgs...),
	"verdict": append(tupleArgs[:5:5],
		ubus.Arg{Name: "verdict", Type: ubus.TypeString},
		ubus.Arg{Name: "reason", Type: ubus.TypeString}),
	"cuts": {
		{Name: "offset", Type: ubus.TypeInt32},
		{Name: "limit", Type: ubus.TypeInt32},
	},
	"why": whySignature,
}
