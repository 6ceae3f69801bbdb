package rpc

import (
	"context"
	"errors"
	"fmt"

	"github.com/fastpath-wrt/fastpath/src/logger"

	"github.com/fastpath-wrt/fastpath/src/ubus"
)

// ErrDaemonNotRunning is returned by CallFastpath when ubus has no
// fastpath object (or ubusd itself is not there).
var ErrDaemonNotRunning = errors.New("the fastpath daemon is not running (no 'fastpath' object on ubus): start it with /etc/init.d/fastpath start")

// CallFastpath calls a method of the running daemon's object, as
// `ubus call fastpath <method> <args>` does, and returns the answer with
// its keys in the order the daemon sent them (ubus.AppendJSON prints it,
// ubus.Decode fills a report type from it). On a ubus error status the
// error is a *ubus.StatusError whose Message is the daemon's "error" text,
// and the answer is the whole of it (e.g. {"error": "..."}).
func CallFastpath(ctx context.Context, socketPath, method string, args any) (ubus.Table, error) {
	log := logger.New()
	log.SetLevel(logger.ErrorLevel)
	c, err := ubus.DialLog(socketPath, logger.NewEntry(log))
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrDaemonNotRunning, err)
	}
	defer c.Close()
	data, err := c.Call(ctx, ObjectName, method, args)
	var se *ubus.StatusError
	if errors.As(err, &se) && se.Code == ubus.StatusNotFound && data == nil {
		return nil, ErrDaemonNotRunning
	}
	return data, err
}
