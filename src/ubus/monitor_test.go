package ubus

import (
	"bytes"
	"testing"
)

// A MONITOR message built the way ubusd_monitor.c builds it around a
// recorded INVOKE gives that INVOKE back.
func TestDecodeMonitor(t *testing.T) {
	// client->ubusd INVOKE of demo.fail, from call_fail_status.
	rec := mustHex("00050002a8a7b5fa0000001c03000008a8a7b5fa040000096661696c0000000007000004")
	inner, err := DecodeMessage(rec)
	if err != nil {
		t.Fatal(err)
	}
	payload := rec[HeaderLen+blobHeaderLen:]
	mon := &Message{Header: Header{Type: MsgMonitor, Seq: 1}}
	mon.AddU32(MonitorClient, 0xf02fd96f)
	mon.AddU32(MonitorPeer, inner.Peer)
	mon.AddU32(MonitorSeq, uint32(inner.Seq))
	mon.AddU32(MonitorType, uint32(inner.Type))
	mon.AddU8(MonitorSend, 0)
	mon.Add(MonitorData, payload)
	b, err := mon.Encode()
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := DecodeMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeMonitor(decoded)
	if err != nil {
		t.Fatal(err)
	}
	if got.Client != 0xf02fd96f || got.Send {
		t.Errorf("client %08x send %v", got.Client, got.Send)
	}
	out, _ := got.Message.Encode()
	if !bytes.Equal(out, rec) {
		t.Errorf("monitored message\n%x\nwant\n%x", out, rec)
	}
	if _, err := DecodeMonitor(inner); err == nil {
		t.Error("an INVOKE decoded as MONITOR")
	}
}
