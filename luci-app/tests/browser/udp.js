'use strict';
// A UDP sender with fixed ports, for a flow the test can find, cut and
// release: node udp.js SRC SPORT DST DPORT FRAMES_PER_SECOND
const dgram = require('node:dgram');
const [src, sport, dst, dport, rate] = process.argv.slice(2);
const sock = dgram.createSocket(src.includes(':') ? 'udp6' : 'udp4');
const payload = Buffer.alloc(64, 'x');
sock.on('error', () => {}); // ICMP unreachable while cut or unanswered: keep sending
sock.bind(+sport, src, () => {
	setInterval(() => sock.send(payload, +dport, dst, () => {}), Math.max(1, Math.round(1000 / +rate)));
});
