'use strict';
// fastpath.format against the hand-made fixtures (exact sentences) and
// against edge cases of each function.

const test = require('node:test');
const assert = require('node:assert/strict');
const { makeRuntime } = require('./lib/luci');
const { fixture } = require('./lib/answers');

const fmt = makeRuntime({}, {}).load('fastpath.format');

test('mode sentence: hardware asked on QCA9558 runs in software, in plain words', () => {
	const st = fixture('status.json');
	assert.equal(fmt.modeSentence(st), 'Hardware offload is not possible on QCA9558; flows are offloaded in software.');
});

test('mode sentence: every requested/effective pair reads as a sentence', () => {
	const mt = { soc: 'mt7621', hw_offload_capable: true, hw_offload_engine: 'MediaTek PPE' };
	const qca = { soc: 'qca9558', hw_offload_capable: false };
	const cases = [
		[{ requested: 'hardware', effective: 'hardware' }, mt, 'Flows are offloaded in hardware by the MediaTek PPE of the MT7621.'],
		[{ requested: 'software', effective: 'software' }, mt, 'Flows are offloaded in software; the MT7621 could offload them in hardware.'],
		[{ requested: 'software', effective: 'software' }, qca, 'Flows are offloaded in software.'],
		[{ requested: 'auto', effective: 'software' }, { soc: 'unknown' }, 'Hardware offload is not possible on this router; flows are offloaded in software.'],
		[{ requested: 'hardware', effective: 'software' }, mt, 'Hardware offload was requested but is not running; flows are offloaded in software.'],
		[{ requested: 'off', effective: 'off' }, mt, 'Flow offloading is off: every packet takes the normal path through the firewall.'],
		[{ requested: 'software', effective: 'off' }, qca, 'Software offload was requested but is not running: no flow is offloaded.']
	];
	for (const [mode, platform, want] of cases)
		assert.equal(fmt.modeSentence({ mode, platform }), want, JSON.stringify(mode) + ' ' + platform.soc);
});

test('flow counts: software is offloaded minus hardware', () => {
	assert.equal(fmt.flowCountsSentence(fixture('status.json').flows), '12 of 40 tracked flows are offloaded: 12 in software, 0 in hardware.');
	assert.equal(fmt.flowCountsSentence({ total: 9, offloaded: 5, hw_offloaded: 3 }), '5 of 9 tracked flows are offloaded: 2 in software, 3 in hardware.');
	assert.equal(fmt.flowCountsSentence({ total: 9, offloaded: 5, hw_offloaded: 3, offloaded_age_s: 12.4 }), '5 of 9 tracked flows are offloaded: 2 in software, 3 in hardware. (offloaded flows counted 12 s ago)');
	assert.equal(fmt.flowCountsSentence({ total: 3, offloaded: 0 }), 'None of the 3 tracked flows is offloaded.');
	assert.equal(fmt.flowCountsSentence(null), 'No flows are tracked right now.');
});

test('flowtable state: in sync, differing, missing', () => {
	const st = fixture('status.json');
	const ok = fmt.flowtableState(st.flowtable);
	assert.equal(ok.sentence, 'The kernel\'s flowtable matches the plan.');
	assert.equal(ok.name, 'inet fastpath ft');
	assert.equal(ok.planned_devices, 'eth0, eth1');
	assert.equal(ok.kernel_flags, 'counter');

	const drift = JSON.parse(JSON.stringify(st.flowtable));
	drift.in_sync = false;
	drift.kernel.devices = ['eth0'];
	drift.kernel.forward_rule = false;
	const d = fmt.flowtableState(drift);
	assert.equal(d.sentence, 'The kernel\'s flowtable differs from the plan. The forward rule that adds flows to it is missing.');
	drift.kernel.chain_present = false;
	assert.equal(fmt.flowtableState(drift).sentence, 'The kernel\'s flowtable differs from the plan. The forward chain that adds flows to it is missing.');
	assert.equal(d.kernel_devices, 'eth0');

	const none = fmt.flowtableState(fixture('status-no-flowtable.json').flowtable);
	assert.equal(none.sentence, 'The kernel has no fastpath table.');
	assert.equal(none.planned_devices, 'none', 'null devices read as none');
});

test('tunnel, cut and block list sentences', () => {
	const st = fixture('status.json');
	assert.equal(fmt.tunnelSentence(st.tunnels[0]), 'ipip-wan6 (wan6) reaches 192.0.2.1 over eth0, which is in the fast path.');
	assert.equal(fmt.tunnelSentence({ device: 'ipip-x', interface: 'x', remote: '192.0.2.9', underlay: '', in_fastpath: false }),
		'ipip-x (x): its flows stay in the slow path.');
	assert.equal(fmt.tunnelSentence({ device: 'gre4-g', interface: 'g', kind: 'gre', remote: '192.0.2.9', underlay: '', in_fastpath: false }),
		'gre4-g (g, gre): its flows stay in the slow path.');
	assert.equal(fmt.tunnelSentence({ device: 'ipip-x', interface: 'x', kind: 'ipip', remote: '192.0.2.9', underlay: 'wan', in_fastpath: false }),
		'ipip-x (x) reaches 192.0.2.9 over wan, which is not in the fast path.');
	assert.equal(fmt.cutSummarySentence(st.cut),
		'Cut connections are dropped in the fast path on eth0, eth1, before the flowtable; a cut stays while frames keep coming and ends 10s after the last one.');
	assert.equal(fmt.cutCountsSentence(st.cut), '2 active cuts, 197994 frames dropped.');
	assert.equal(fmt.cutSummarySentence(fixture('status-no-flowtable.json').cut),
		'A cut only deletes the connection\'s conntrack entry; its frames are not dropped in the fast path.');
	assert.equal(fmt.cutSummarySentence({ enabled: false }), 'Cutting connections is off.');
	assert.equal(fmt.blocklistLine(st.cut.blocklists[0]), 'banip (nftables set inet banIP blocklistv4): 1234 entries');
	assert.equal(fmt.blocklistLine({ name: 'one', kind: 'file', source: '/x', entries: 1 }), 'one (file /x): 1 entry');
});

test('bytes, bitrate, duration and counters of 64-bit size', () => {
	assert.equal(fmt.bytes(0), '0 B');
	assert.equal(fmt.bytes(1023), '1023 B');
	assert.equal(fmt.bytes(1536), '1.50 KiB');
	assert.equal(fmt.bytes(251658240), '240.00 MiB');
	assert.equal(fmt.bytes(5 * 2 ** 40), '5.00 TiB');
	assert.equal(fmt.bitrate(999), '999 bit/s');
	assert.equal(fmt.bitrate(12300000), '12.30 Mbit/s');
	assert.equal(fmt.bitrate(2.46e9), '2.46 Gbit/s');
	assert.equal(fmt.duration(45), '45s');
	assert.equal(fmt.duration(125), '2m 05s');
	assert.equal(fmt.duration(86399), '23h 59m');
	assert.equal(fmt.duration(90061), '1d 01h');
	assert.equal(fmt.cutCountsSentence({ active: 1, frames_dropped: 5000000000 }), '1 active cut, 5000000000 frames dropped.', 'no 32-bit wrap');
});

test('tuples: IPv6 in brackets, portless protocols bare', () => {
	assert.equal(fmt.tuple({ src: '192.168.1.23', sport: 51234, dst: '93.184.216.34', dport: 443 }), '192.168.1.23:51234 \u2192 93.184.216.34:443');
	assert.equal(fmt.tuple({ src: '2001:db8::1', sport: 53000, dst: '2001:db8::53', dport: 53 }), '[2001:db8::1]:53000 \u2192 [2001:db8::53]:53');
	assert.equal(fmt.tuple({ src: '10.0.0.1', dst: '10.0.0.2' }), '10.0.0.1 \u2192 10.0.0.2');
});

test('flow rows from the fixture', () => {
	const flows = fixture('flows.json').flows;
	const r = fmt.flowRow(flows[0]);
	assert.deepEqual(r, {
		id: 3405691582, proto: 'TCP', family: 'IPv4', state: 'ESTABLISHED',
		original: '192.168.1.23:51234 \u2192 93.184.216.34:443',
		reply: '93.184.216.34:443 \u2192 198.51.100.2:51234',
		offload: 'Software', counters: '182733 packets, 240.00 MiB', timeout: '23h 59m'
	});
	assert.equal(fmt.flowRow(flows[1]).offload, 'No');
	assert.equal(fmt.flowRow(flows[1]).family, 'IPv6');
	assert.equal(fmt.flowRow(flows[2]).counters, 'not counted by the hardware', 'MT7621 hardware flows carry no counters');
	assert.equal(fmt.counters({ offload: '', packets: 0, bytes: 0 }), 'not counted', 'conntrack accounting off');
	assert.equal(fmt.counters({ offload: 'software', packets: 1, bytes: 0 }), '1 packet, 0 B');
});

test('sorting: by bytes, by address numerically, stable on ties', () => {
	const flows = fixture('flows.json').flows;
	assert.deepEqual(fmt.sortFlows(flows, 'bytes', true).map((f) => f.id), [3405691582, 17, 99]);
	assert.deepEqual(fmt.sortFlows(flows, 'offload', true).map((f) => f.id), [99, 3405691582, 17]);
	const addr = [
		{ id: 1, original: { src: '192.168.1.100' } },
		{ id: 2, original: { src: '192.168.1.23' } },
		{ id: 3, original: { src: '2001:db8::1' } },
		{ id: 4, original: { src: '10.0.0.1' } }
	];
	assert.deepEqual(fmt.sortFlows(addr, 'src', false).map((f) => f.id), [4, 2, 1, 3], '10 < 192.168.1.23 < 192.168.1.100 < IPv6');
	const ties = [{ id: 5, bytes: 1 }, { id: 6, bytes: 1 }, { id: 7, bytes: 1 }];
	assert.deepEqual(fmt.sortFlows(ties, 'bytes', true).map((f) => f.id), [5, 6, 7]);
	assert.deepEqual(fmt.sortFlows(flows, 'rate', true, { 17: 800, 99: 8000 }).map((f) => f.id), [99, 17, 3405691582]);
	assert.equal(fmt.addrKey('2001:db8::1'), '6 2001:0db8:0000:0000:0000:0000:0000:0001');
});

test('filtering: text, offload kinds and protocol', () => {
	const flows = fixture('flows.json').flows;
	const ids = (f) => fmt.filterFlows(flows, f).map((x) => x.id);
	assert.deepEqual(ids({}), [3405691582, 17, 99]);
	assert.deepEqual(ids({ text: '2001:DB8:2' }), [17], 'case-insensitive address match');
	assert.deepEqual(ids({ text: '443' }), [3405691582]);
	assert.deepEqual(ids({ offload: 'any' }), [3405691582, 99]);
	assert.deepEqual(ids({ offload: 'none' }), [17]);
	assert.deepEqual(ids({ offload: 'hardware' }), [99]);
	assert.deepEqual(ids({ proto: 'udp', offload: 'any' }), [99]);
	assert.deepEqual(ids({ text: 'no such thing' }), []);
});

test('rates between two polls; restarted or new flows have none', () => {
	const before = [{ id: 1, bytes: 1000 }, { id: 2, bytes: 5000 }];
	const after = [{ id: 1, bytes: 126000 }, { id: 2, bytes: 10 }, { id: 3, bytes: 99 }];
	assert.deepEqual(fmt.flowRates(before, after, 5), { 1: 200000 });
	assert.deepEqual(fmt.flowRates(before, after, 0), {});
	assert.deepEqual(fmt.flowRates([{ id: 9, bytes: 0 }], [{ id: 9, bytes: 0 }], 5), {}, 'no counters: unknown rate, not 0');
	assert.deepEqual(fmt.flowRates([{ id: 9, bytes: 7 }], [{ id: 9, bytes: 7 }], 5), { 9: 0 }, 'counted and idle: 0');
});

test('cut and uncut arguments come from the original direction', () => {
	const f = fixture('flows.json').flows[0];
	assert.deepEqual(fmt.cutArgs(f, '  flooding  '), { proto: 'tcp', src: '192.168.1.23', dst: '93.184.216.34', sport: 51234, dport: 443, reason: 'flooding' });
	assert.equal(fmt.cutArgs(f, '').reason, 'cut from LuCI');
	const c = fixture('cuts.json').cuts[0];
	assert.deepEqual(fmt.uncutArgs(c), { proto: 'udp', src: '192.168.1.23', dst: '203.0.113.9', sport: 40000, dport: 5201 });
});

test('cut rows: age, expiry, trigger in words', () => {
	const c = fixture('cuts.json').cuts[0];
	const now = Date.parse('2026-11-30T05:00:17.250Z');
	assert.deepEqual(fmt.cutRow(c, now), {
		original: 'UDP 192.168.1.23:40000 \u2192 203.0.113.9:5201',
		reason: 'address 203.0.113.9 is on block list banip',
		trigger: 'block list banip',
		since: '2m 05s ago',
		expires: 'in 10s',
		dropped: '197982 frames, 277.55 MiB',
		where: 'fast path'
	});
	assert.equal(fmt.age('0001-01-01T00:00:00Z', now), null, "Go's zero time means unknown");
	assert.equal(fmt.triggerLabel('ubus'), 'ubus / LuCI');
});

test('call errors: the daemon\'s error body, a bare ubus status, or none', () => {
	assert.equal(fmt.callError({ error: 'sport: 70000 is not a port (1-65535)' }), 'sport: 70000 is not a port (1-65535)');
	assert.equal(fmt.callError(6), 'The fastpath daemon refused the request (ubus status 6).');
	assert.equal(fmt.callError(0), null);
	assert.equal(fmt.callError({ cuts: [] }), null);
	assert.equal(fmt.callError({ released: 1 }), null);
});

test('mode choices: what the router can run, automatic, and the current one', () => {
	assert.deepEqual(fmt.modeChoices('hardware', fixture('capabilities.json').modes), ['off', 'software', 'hardware', 'auto']);
	assert.deepEqual(fmt.modeChoices('software', ['off', 'software']), ['off', 'software', 'auto']);
	assert.deepEqual(fmt.modeChoices('off', []), ['off', 'software', 'hardware', 'auto'], 'unknown capabilities offer everything');
	assert.deepEqual(fmt.shapeCapabilities(fixture('capabilities.json')).modes, ['off', 'software']);
});

test('overview line and settings values in words', () => {
	assert.equal(fmt.overviewLine(fixture('status.json')), 'Software offload (hardware offload requested) \u2014 12 of 40 flows offloaded, 0 in hardware');
	assert.equal(fmt.overviewLine(fixture('status-no-flowtable.json')), 'Off (software offload requested) \u2014 0 of 3 flows offloaded, 0 in hardware');
	assert.equal(fmt.firewallMode('1', '1'), 'hardware');
	assert.equal(fmt.firewallMode('1', null), 'software');
	assert.equal(fmt.firewallMode(null, '1'), 'off');
	assert.equal(fmt.blocklistSource({ type: 'nftset', family: 'inet', table: 'banIP', set: 'blocklistv4' }), 'nftables set inet banIP blocklistv4');
	assert.equal(fmt.blocklistSource({ type: 'banip' }), 'every feed set of banIP (inet banIP)');
	assert.equal(fmt.blocklistSource({ type: 'crowdsec' }), 'the CrowdSec bouncer\'s sets (ip crowdsec, ip6 crowdsec6)');
	assert.equal(fmt.blocklistSource({ type: 'file', path: '/etc/fastpath/blocklist.txt' }), 'file /etc/fastpath/blocklist.txt');
	assert.equal(fmt.blocklistSource({ type: 'list', address: ['198.51.100.7', '2001:db8:bad::/48'] }), '2 addresses listed here');
	assert.equal(fmt.blocklistSource({ type: 'list', address: '198.51.100.7' }), '1 address listed here');
});

// Restricts `v` to the keys `like` has, recursively, so a shaped answer
// compares with the answer it came from.
function pick(v, like) {
	if (Array.isArray(like))
		return Array.isArray(v) ? v.map((x, i) => pick(x, like[i])) : v;
	if (like && typeof like == 'object' && v && typeof v == 'object') {
		const out = {};
		for (const k of Object.keys(like))
			out[k] = pick(v[k], like[k]);
		return out;
	}
	return v;
}

test('shaping keeps every field of answers made by the Go types', () => {
	const st = fixture('status.json');
	assert.deepEqual(pick(fmt.shapeStatus(st), st), st);
	const fl = fixture('flows.json');
	assert.deepEqual(pick(fmt.shapeFlows(fl), fl), fl);
	const cu = fixture('cuts.json');
	assert.deepEqual(pick(fmt.shapeCuts(cu), cu), cu);
	const caps = fixture('capabilities.json');
	assert.deepEqual(pick(fmt.shapeCapabilities(caps), caps), caps);
	assert.deepEqual(fmt.shapePlatform(caps.platform), fmt.shapePlatform(caps), 'a bare platform is taken too');
});

test('shaping turns nulls, missing fields and wrong types into Go zero values', () => {
	assert.equal(fmt.shapeStatus({}), null, 'not a status answer');
	assert.equal(fmt.shapeStatus(6), null, 'a ubus status code');
	const z = fmt.shapeStatus(fixture('status-no-flowtable.json'));
	assert.deepEqual(z.decisions, []);
	assert.deepEqual(z.flowtable.kernel.devices, []);
	assert.deepEqual(z.tunnels, []);
	const odd = fmt.shapeStatus({ mode: { requested: 7, effective: null }, flows: { total: '12', offloaded: NaN }, tunnels: 'x', cut: { devices: ['eth0', null, {}] } });
	assert.deepEqual(odd.mode, { requested: '7', effective: '', reason: '' });
	assert.deepEqual(odd.flows, { total: 0, offloaded: 0, hw_offloaded: 0, offloaded_age_s: 0 });
	assert.deepEqual(odd.tunnels, []);
	assert.deepEqual(odd.cut.devices, ['eth0', '', '']);
	assert.ok(fmt.cutSummarySentence(Object.assign(odd.cut, { enabled: true, in_fastpath: true })).includes(' on eth0, before'), 'empty device names are left out');
	assert.equal(odd.platform.hw_offload_capable, false);
});

test('a list the daemon shortened to fit ubus says how many more there are', () => {
	const s = fmt.shapeCuts({ cuts: [ {}, {} ], cuts_total: 2500, blocklists: [ { errors: [ 'x' ], errors_total: 10000 } ] });
	assert.equal(s.cuts_total, 2500);
	assert.equal(s.blocklists[0].errors_total, 10000);
	assert.equal(fmt.more(s.cuts_total, s.cuts.length), '… and 2498 more (2500 in all)');
	assert.equal(fmt.more(s.blocklists[0].errors_total, 1), '… and 9999 more (10000 in all)');
	assert.equal(fmt.more(0, 2), '', 'a whole list has no _total');
	assert.equal(fmt.more(2, 2), '');
});

test('a cut that only fell back to conntrack deletion says so', () => {
	assert.equal(fmt.cutOutcome({ count: 1, in_fastpath: 1, conntrack_only: 0 }, 'tcp 1.2.3.4:1 > 5.6.7.8:2'), 'Cut tcp 1.2.3.4:1 > 5.6.7.8:2.');
	assert.match(fmt.cutOutcome({ count: 20, in_fastpath: 2, conntrack_only: 18 }, '192.0.2.7'),
		/^192\.0\.2\.7: 18 of 20 connections were only removed from conntrack, not dropped in the fast path/);
	assert.equal(fmt.cutOutcome(null, 'x'), 'Cut x.');
});

test('refusal: access denied names the read-only login; any other failure keeps its message', () => {
	const { rpcError } = require('./lib/luci');
	assert.equal(fmt.refusal('The cut was not released', rpcError(-32002, 'Access denied')),
		'The cut was not released: access denied; this login may only read.');
	const other = fmt.refusal('The mode was not changed', rpcError(-32000, 'Object not found'));
	assert.match(other, /^The mode was not changed: .*Object not found/);
	assert.equal(fmt.refusal('x', 'timed out'), 'x: timed out');
});
