// Command udpflood sends the lab's UDP traffic with fixed ports at a fixed
// rate, bounded in count and time, and only to the addresses of the lab's
// network namespaces:
//
//	udpflood send  -from IP:PORT -to IP:PORT -pps N -seconds S [-count N] [-size B]
//	udpflood echo  -on IP:PORT -seconds S
//	udpflood flows -from IP -base-port P -flows N -to IP:PORT -seconds S [-interval D]
//
// send is the flood a listed sender keeps up; echo answers every datagram so
// that conntrack sees both directions; flows keeps N connections established
// from consecutive source ports, one datagram per flow per interval.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "send":
		err = runSend(os.Args[2:])
	case "echo":
		err = runEcho(os.Args[2:])
	case "flows":
		err = runFlows(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "udpflood %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: udpflood send|echo|flows [options]; udpflood COMMAND -h for the options")
	os.Exit(2)
}

// newFlags returns a flag set that exits with status 2 on bad options.
func newFlags(name string) *flag.FlagSet {
	return flag.NewFlagSet("udpflood "+name, flag.ExitOnError)
}
