// Command testbroker stands in for ubusd in the lab, where OpenWrt's ubusd
// does not exist: `testbroker -s /var/run/ubus/ubus.sock` serves the socket
// until SIGINT or SIGTERM. With a command after the options it is a small
// client that prints like the ubus CLI:
//
//	testbroker [-s sock] [-t sec] call <object> <method> [<json>]
//	testbroker [-s sock] [-v] list [<path>]
//	testbroker [-s sock] send <type> [<json>]
//	testbroker [-s sock] [-t sec] listen [<pattern>...]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fastpath-wrt/fastpath/src/ubus"
	"github.com/fastpath-wrt/fastpath/src/ubus/ubustest"
)

func main() {
	sock := flag.String("s", ubus.DefaultSocket, "unix socket `path`")
	timeout := flag.Int("t", 30, "client commands: timeout in `seconds`")
	verbose := flag.Bool("v", false, "list: print method signatures")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		os.Exit(serve(*sock))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeout)*time.Second)
	defer cancel()
	os.Exit(client(ctx, *sock, *verbose, args))
}

func serve(sock string) int {
	if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "testbroker:", err)
		return 1
	}
	b, err := ubustest.Listen(sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testbroker:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "testbroker: serving", sock)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	b.Close()
	return 0
}

func client(ctx context.Context, sock string, verbose bool, args []string) int {
	c, err := ubus.Dial(sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "Failed to connect to ubus:", err)
		return 255
	}
	defer c.Close()
	cmd, args := args[0], args[1:]
	switch {
	case cmd == "call" && (len(args) == 2 || len(args) == 3):
		return call(ctx, c, args)
	case cmd == "list" && len(args) <= 1:
		return list(ctx, c, verbose, args)
	case cmd == "send" && (len(args) == 1 || len(args) == 2):
		var data any
		if len(args) == 2 {
			data = json.RawMessage(args[1])
		}
		return status(c.SendEvent(ctx, args[0], data), "send")
	case cmd == "listen":
		return listen(ctx, c, args)
	}
	fmt.Fprintln(os.Stderr, "usage: testbroker [-s sock] [-t sec] [-v] [call <object> <method> [<json>] | list [<path>] | send <type> [<json>] | listen [<pattern>...]]")
	return 2
}

func call(ctx context.Context, c *ubus.Conn, args []string) int {
	id, err := c.LookupID(ctx, args[0])
	if err != nil {
		// Like ubus: a failed lookup exits with the status itself.
		var se *ubus.StatusError
		if errors.As(err, &se) {
			fmt.Fprintf(os.Stderr, "Command failed: %s\n", ubus.StatusText(se.Code))
			return se.Code
		}
		fmt.Fprintln(os.Stderr, "Command failed:", err)
		return 255
	}
	var msg any
	if len(args) == 3 {
		msg = json.RawMessage(args[2])
	}
	data, err := c.Invoke(ctx, id, args[1], msg)
	if len(data) > 0 {
		fmt.Println(ubus.FormatJSON(data, true))
	}
	return status(err, "ubus call "+strings.Join(args, " "))
}

// status prints a failure as ubus does and exits with 256 minus the code.
func status(err error, what string) int {
	if err == nil {
		return 0
	}
	var se *ubus.StatusError
	if errors.As(err, &se) {
		fmt.Fprintf(os.Stderr, "Command failed: %s (%s)\n", what, ubus.StatusText(se.Code))
		return 256 - se.Code
	}
	fmt.Fprintf(os.Stderr, "Command failed: %s (%v)\n", what, err)
	return 255
}

func list(ctx context.Context, c *ubus.Conn, verbose bool, args []string) int {
	path := ""
	if len(args) == 1 {
		path = args[0]
	}
	objs, err := c.Lookup(ctx, path)
	if err != nil {
		return status(err, "list")
	}
	for _, o := range objs {
		if !verbose {
			fmt.Println(o.Path)
			continue
		}
		fmt.Printf("'%s' @%08x\n", o.Path, o.ID)
		for _, m := range o.Signature {
			var parts []string
			if args, ok := m.Value.(ubus.Table); ok {
				for _, a := range args {
					t, _ := a.Value.(int32)
					parts = append(parts, fmt.Sprintf("%q:%q", a.Name, ubus.BlobmsgType(t).String()))
				}
			}
			fmt.Printf("\t%q:{%s}\n", m.Name, strings.Join(parts, ","))
		}
	}
	return 0
}

func listen(ctx context.Context, c *ubus.Conn, patterns []string) int {
	if len(patterns) == 0 {
		patterns = []string{"*"}
	}
	for _, p := range patterns {
		err := c.Listen(ctx, p, func(ev string, data ubus.Table) {
			fmt.Printf("{ %q: %s }\n", ev, ubus.FormatJSON(data, false))
		})
		if err != nil {
			return status(err, "listen")
		}
	}
	<-ctx.Done()
	return 0
}
