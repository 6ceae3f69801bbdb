// Package ubus speaks OpenWrt's ubus protocol: the blobmsg codec, the
// messages, and a client connection that calls, registers objects and sends
// events.
//
// The wire format follows what OpenWrt's ubusd, libubus and ucode put on the
// socket (testdata/vectors holds recorded traffic): an 8-byte header (u8
// version, u8 type, be16 seq, be32 peer) and one blob attribute whose payload
// is a list of ubus attributes; DATA and SIGNATURE carry blobmsg fields.
//
// The blobmsg value model (Table, Array, string, integers, bool, double)
// has its own JSON writer, parser and a decoder into Go types, so that the
// router's binary carries no encoding/json.
package ubus
