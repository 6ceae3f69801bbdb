package nft

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/google/nftables"
)

// Watch calls changed each time someone else changes nf_tables in a way that
// may touch table inet fastpath (a deleted table, chain or rule, a changed
// flowtable), so the daemon reads the kernel again and repairs it. Our own
// batches are ignored. It returns nil when ctx ends, or an error when the
// kernel's event stream breaks (e.g. ENOBUFS after a burst): the caller
// should re-apply and watch again.
func (b *Backend) Watch(ctx context.Context, changed func()) error {
	c, err := b.nftConn()
	if err != nil {
		return err
	}
	mon := nftables.NewMonitor(nftables.WithMonitorEventBuffer(64))
	events, err := c.AddGenerationalMonitor(mon)
	if err != nil {
		return fmt.Errorf("subscribing to nftables events (NFNLGRP_NFTABLES): %w", err)
	}
	defer func() {
		mon.Close()
		go func() { // let the monitor's goroutine finish its last send
			for range events {
			}
		}()
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				return errors.New("nftables event stream closed: re-apply and watch again")
			}
			if ev.GeneratedBy != nil && ev.GeneratedBy.Type == nftables.MonitorEventTypeOOB {
				return fmt.Errorf("nftables event stream broke (re-apply and watch again): %w", ev.GeneratedBy.Error)
			}
			if concernsUs(ev, isOwnTask) {
				changed()
			}
		}
	}
}

// isOwnTask reports whether the kernel task id is a thread of this process:
// the kernel names the task (thread) that committed a generation, not the
// process.
func isOwnTask(tid uint32) bool {
	if int(tid) == os.Getpid() {
		return true
	}
	_, err := os.Stat("/proc/self/task/" + strconv.FormatUint(uint64(tid), 10))
	return err == nil
}

// concernsUs reports whether one nf_tables generation, committed by a task
// that is not ours, may have changed our table. google/nftables decodes
// tables, chains, rules, sets and objects but not flowtables: a generation
// whose changes it could not decode is taken as ours, which costs a re-read.
func concernsUs(ev *nftables.MonitorEvents, own func(tid uint32) bool) bool {
	if ev.GeneratedBy != nil {
		if gen, ok := ev.GeneratedBy.Data.(*nftables.GenMsg); ok && own(gen.ProcPID) {
			return false
		}
	}
	if len(ev.Changes) == 0 {
		return true
	}
	for _, ch := range ev.Changes {
		var t *nftables.Table
		switch d := ch.Data.(type) {
		case *nftables.Table:
			t = d
		case *nftables.Chain:
			t = d.Table
		case *nftables.Rule:
			t = d.Table
		case *nftables.Set:
			t = d.Table
		}
		if t != nil && t.Name == TableName && t.Family == nftables.TableFamilyINet {
			return true
		}
	}
	return false
}
