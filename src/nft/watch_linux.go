package nft

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/fastpath-wrt/fastpath/src/nftevents"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// UseEvents makes Watch read nftables notifications from hub, the
// daemon's one socket on them, instead of a socket of its own.
func (b *Backend) UseEvents(hub *nftevents.Hub) { b.events = hub }

// Watch calls changed each time someone else changes nf_tables in a way that
// may touch table inet fastpath (a deleted table, chain, rule, set or
// flowtable), so the daemon reads the kernel again and repairs it, or
// firewall4's table inet fw4 (a reload), whose forward-path rules the
// daemon compares for recheck_on_rule_change. Our own
// batches are ignored. It returns nil when ctx ends, or an error when the
// kernel's event stream breaks (e.g. ENOBUFS after a burst): the caller
// should re-apply and watch again.
func (b *Backend) Watch(ctx context.Context, changed func()) error {
	hub := b.events
	if hub == nil {
		h, err := nftevents.Open(b.netns)
		if err != nil {
			return fmt.Errorf("subscribing to nftables events (NFNLGRP_NFTABLES): %w", err)
		}
		hub = h
		go h.Run(ctx)
	}
	sub := hub.Subscribe()
	defer sub.Close()
	touched := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case msgs, ok := <-sub.Messages():
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("nftables event stream broke (re-apply and watch again): %w", sub.Err())
			}
			for _, m := range msgs {
				gen, ours := concernsUs(uint16(m.Header.Type), m.Data)
				touched = touched || ours
				if gen {
					if touched && !isOwnTask(genPID(m.Data)) {
						changed()
					}
					touched = false
				}
			}
		}
	}
}

// nf_tables message types (uapi/linux/netfilter/nf_tables.h).
const (
	nftSubsys       = unix.NFNL_SUBSYS_NFTABLES
	nftMsgNewGen    = unix.NFT_MSG_NEWGEN
	nftMsgNewSetEl  = unix.NFT_MSG_NEWSETELEM
	nftMsgDelSetEl  = unix.NFT_MSG_DELSETELEM
	attrObjTable    = 1 // NFTA_{TABLE_NAME,CHAIN,RULE,SET,OBJ,FLOWTABLE}_TABLE all are 1
	attrGenProcPID  = 2 // NFTA_GEN_PROC_PID
	nftMsgMaxObject = unix.NFT_MSG_DELFLOWTABLE
)

// firewallTable is firewall4's table (inet fw4).
const firewallTable = "fw4"

// concernsUs reads one message of a generation: gen reports the
// generation's end (NEWGEN), ours a change that may touch table inet
// fastpath or firewall4's rules. Set elements are never ours (our table has no sets), however
// many a block-list load brings; a message of a kind this code does not
// know is taken as ours, which costs a re-read.
func concernsUs(typ uint16, data []byte) (gen, ours bool) {
	if typ>>8 != nftSubsys {
		return false, false
	}
	switch t := typ & 0xff; {
	case t == nftMsgNewGen:
		return true, false
	case t == nftMsgNewSetEl || t == nftMsgDelSetEl:
		return false, false
	case t > nftMsgMaxObject:
		return false, true
	}
	if len(data) < 4 || data[0] != unix.NFPROTO_INET {
		return false, false
	}
	ad, err := netlink.NewAttributeDecoder(data[4:])
	if err != nil {
		return false, true
	}
	for ad.Next() {
		if ad.Type() == attrObjTable {
			t := ad.String()
			return false, t == TableName || t == firewallTable
		}
	}
	return false, ad.Err() != nil
}

// genPID is the task that committed a generation (0 when not said).
func genPID(data []byte) uint32 {
	if len(data) < 4 {
		return 0
	}
	ad, err := netlink.NewAttributeDecoder(data[4:])
	if err != nil {
		return 0
	}
	for ad.Next() {
		if ad.Type() == attrGenProcPID {
			if b := ad.Bytes(); len(b) == 4 {
				return binary.BigEndian.Uint32(b)
			}
		}
	}
	return 0
}
