'use strict';
// The views rendered against the hand-made fixtures: what a user reads,
// what each button calls, and what polling refreshes.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { makeRuntime, squash, rpcError } = require('./lib/luci');
const { fixture } = require('./lib/answers');

const clone = (v) => JSON.parse(JSON.stringify(v));
const flush = () => new Promise((r) => setImmediate(r));

function assertNoJunk(text, where) {
	for (const junk of ['undefined', 'NaN', '[object Object]', 'null'])
		assert.ok(!text.includes(junk), `${where} shows "${junk}": ${text}`);
}

function button(node, label) {
	const b = node.findAll((n) => n.tag == 'button' && squash(n.textContent) == label);
	assert.equal(b.length >= 1, true, `no button "${label}"`);
	return b[0];
}

async function renderStatus(answers) {
	const rt = makeRuntime(answers);
	const view = rt.load('view.fastpath.status');
	const node = await Promise.resolve(view.render(await view.load()));
	return { rt, view, node, text: squash(node.textContent) };
}

test('status view: the QCA9558 case in plain words', async () => {
	const { rt, node, text } = await renderStatus({ status: fixture('status.json'), capabilities: fixture('capabilities.json') });
	for (const want of [
		'Flow Offload',
		'Hardware offload is not possible on QCA9558; flows are offloaded in software.',
		'Why: hardware offload requested, but QCA9558 has no flow offload engine: running software offload',
		'Requested Hardware offload', 'Running Software offload', 'fastpath version 0.1.0-r12',
		'Model TP-Link Archer C7 v2', 'SoC Qualcomm Atheros QCA9558', 'Hardware offload not possible',
		'/proc/device-tree/compatible tplink,archer-c7-v2 qca,qca9558 SoC is QCA9558',
		'The kernel\'s flowtable matches the plan.',
		'Devices in the plan eth0, eth1', 'Devices in the kernel eth0, eth1', 'Flags in the kernel counter',
		'Flowtable support yes', 'IPIP receive acceleration no',
		'device : eth0 and eth1 carry the lan and wan zones',
		'IPIP rx acceleration in the flowtable needs Linux 6.13 or newer',
		'12 of 40 tracked flows are offloaded: 12 in software, 0 in hardware.',
		'ipip-wan6 (wan6) reaches 192.0.2.1 over eth0, which is in the fast path.',
		'Cut connections are dropped in the fast path on eth0, eth1',
		'2 active cuts, 197994 frames dropped.',
		'banip (nftables set inet banIP blocklistv4): 1234 entries',
		'/etc/fastpath/blocklist.txt:3: "10.0.0.0/33" is not an IP address or prefix',
		'Firewall rule changes On: when firewall4\'s forward-path rules really change, every offloaded flow goes through the firewall once',
		'Firewall rules now firewall4\'s forward path: 14 chains, 41 rules, digest 9ff5a14529f64d0f',
		'Flows last checked against 9ff5a14529f64d0f',
		'Last change firewall4\'s forward-path rules changed at 2026-12-01T16:59:40Z: 12 offloaded flows re-checked',
		'offloaded again) <img src=x onerror=alert(1)>'
	])
		assert.ok(text.includes(want), `status page lacks "${want}"`);
	assert.equal(node.findAll((n) => n.tag == 'img').length, 0, 'the recheck reason became markup');
	assertNoJunk(text, 'status page');
	assert.ok(!text.includes('mode : hardware offload requested'), 'the mode decision repeats the "Why" line');
	assert.deepEqual(rt.calls.map((c) => c.method), ['status', 'capabilities']);
	const choices = node.findAll((n) => n.attrs.id == 'fastpath-mode')[0].children.map((o) => o.attrs.value);
	assert.deepEqual(choices, ['off', 'software', 'hardware', 'auto'], 'hardware is offered because it is requested now');
	assert.equal(rt.polls.length, 1);
	assert.equal(rt.polls[0].interval, 5);
});

test('status view: polling swaps in the new answer', async () => {
	const first = fixture('status.json');
	const second = clone(first);
	second.flows = { total: 41, offloaded: 20, hw_offloaded: 0 };
	let n = 0;
	const { rt, node } = await renderStatus({ status: () => (n++ == 0 ? first : second) });
	await rt.runPolls();
	const text = squash(node.textContent);
	assert.ok(text.includes('20 of 41 tracked flows are offloaded'), text);
	assert.ok(!text.includes('12 of 40'), 'old numbers still shown');
	assert.deepEqual(rt.calls.map((c) => c.method), ['status', 'capabilities', 'status'], 'capabilities are read once');
});

test('status view: a kernel without flowtable and a daemon error', async () => {
	const { text } = await renderStatus({ status: fixture('status-no-flowtable.json') });
	for (const want of [
		'Software offload was requested but is not running: no flow is offloaded.',
		'The kernel has no fastpath table.',
		'flowtable: CONFIG_NF_FLOW_TABLE (kmod-nft-offload)',
		'apply: flowtable ft: operation not supported',
		'SoC not recognised',
		'No tunnel is configured.',
		'No evidence was collected.',
		'No block list is watched.'
	])
		assert.ok(text.includes(want), `status page lacks "${want}": ${text}`);
	assertNoJunk(text, 'status page without flowtable');
});

test('status view: the real CLI answer of a development machine', async () => {
	const { text } = await renderStatus({ status: fixture('status-cli-devmachine.json') });
	for (const want of [
		'Flow offloading is off: every packet takes the normal path through the firewall.',
		'Why: flow offloading is off (firewall.@defaults[0].flow_offloading=0)',
		'fastpath keeps no flowtable in the kernel now, as planned.',
		'/sys/class/net/eth0/device/driver virtio_net',
		'No flows are tracked right now.',
		'A cut only deletes the connection\'s conntrack entry',
		'0 active cuts, 0 frames dropped.'
	])
		assert.ok(text.includes(want), `status page lacks "${want}": ${text}`);
	assertNoJunk(text, 'status page of the development machine');
});

test('status view: no daemon', async () => {
	const { text } = await renderStatus({ status: 4 });
	assert.equal(text, 'Flow Offload What the router really offloads, read back from the kernel, and why. The fastpath daemon does not answer. Start it with /etc/init.d/fastpath start.');
});

test('status view: changing the mode asks first, then calls set', async () => {
	const after = clone(fixture('status.json'));
	after.mode = { requested: 'auto', effective: 'software', reason: 'auto: QCA9558 cannot offload in hardware' };
	const { rt, node } = await renderStatus({ status: fixture('status.json'), set: () => after });
	const select = node.findAll((n) => n.attrs.id == 'fastpath-mode')[0];
	assert.equal(select.value, 'hardware', 'the select starts at the requested mode');
	select.value = 'auto';
	const done = button(node, 'Change mode…').fire('click');
	assert.equal(rt.modals.length, 1);
	assert.equal(rt.modals[0].title, 'Change the offload mode?');
	assert.ok(squash(rt.modals[0].node.textContent).includes('to "Automatic"'));
	assert.deepEqual(rt.calls.map((c) => c.method), ['status', 'capabilities'], 'nothing is called before confirming');
	button(rt.modals[0].node, 'Change mode').fire('click');
	await done;
	assert.deepEqual(rt.calls[2], { object: 'fastpath', method: 'set', params: { mode: 'auto' } });
	assert.ok(squash(node.textContent).includes('Why: auto: QCA9558 cannot offload in hardware'), 'the answer of set is shown');
	assert.equal(rt.modals[0].open, false);
});

test('status view: the selector offers only what the router can run, and automatic', async () => {
	const st = clone(fixture('status.json'));
	st.mode.requested = 'software';
	const { node } = await renderStatus({ status: st, capabilities: fixture('capabilities.json') });
	const select = node.findAll((n) => n.attrs.id == 'fastpath-mode')[0];
	assert.deepEqual(select.children.map((o) => squash(o.textContent)), ['Off', 'Software offload', 'Automatic']);
	assert.equal(select.value, 'software');
});

test('status view: a refused mode change is reported, cancel calls nothing', async () => {
	const { rt, node } = await renderStatus({ status: fixture('status.json'), set: { error: 'mode: "turbo" is not off, software, hardware or auto' } });
	let done = button(node, 'Change mode…').fire('click');
	button(rt.modals[0].node, 'Cancel').fire('click');
	await done;
	assert.deepEqual(rt.calls.map((c) => c.method), ['status', 'capabilities']);
	done = button(node, 'Change mode…').fire('click');
	button(rt.modals[1].node, 'Change mode').fire('click');
	await done;
	assert.equal(rt.notifications.length, 1);
	assert.equal(rt.notifications[0].cls, 'danger');
	assert.equal(rt.notifications[0].text, 'The mode was not changed: mode: "turbo" is not off, software, hardware or auto');
});

async function renderFlows(answers) {
	const rt = makeRuntime(answers);
	const view = rt.load('view.fastpath.flows');
	const node = await Promise.resolve(view.render(await view.load()));
	return { rt, view, node };
}

const rowIds = (node) => node.findAll((n) => n.attrs['data-flow'] !== undefined).map((n) => +n.attrs['data-flow']);

test('flows view: rows, counters, default sort by bytes and the active cuts', async () => {
	const { rt, node } = await renderFlows({ flows: fixture('flows.json'), cuts: fixture('cuts.json') });
	assert.deepEqual(rowIds(node), [3405691582, 17, 99]);
	const text = squash(node.textContent);
	for (const want of [
		'Showing 3 of 40 flows.',
		'TCP IPv4 192.168.1.23:51234 93.184.216.34:443 reply 93.184.216.34:443 \u2192 198.51.100.2:51234 Software ESTABLISHED 182733 packets, 240.00 MiB \u2013 23h 59m Cut…',
		'UDP IPv6 [2001:db8:1::23]:53000 [2001:db8:2::53]:53',
		'Hardware not counted by the hardware',
		'UDP 192.168.1.23:40000 \u2192 203.0.113.9:5201 address 203.0.113.9 is on block list banip block list banip',
		'197982 frames, 277.55 MiB fast path Release',
		'TCP [2001:db8:1::23]:51000 \u2192 [2001:db8:bad::7]:443 cut from LuCI: suspicious ubus / LuCI',
		'2 active cuts, 197994 frames dropped.'
	])
		assert.ok(text.includes(want), `flows page lacks "${want}": ${text}`);
	assertNoJunk(text, 'flows page');
	assert.deepEqual(rt.calls.map((c) => [c.method, c.params]), [['flows', { limit: 500 }], ['cuts', {}]]);
	assert.equal(rt.polls[0].interval, 5);
});

test('flows view: a cut list the daemon had to shorten says so; one without the fields reads as before', async () => {
	const cuts = fixture('cuts.json');
	const plain = squash((await renderFlows({ flows: fixture('flows.json'), cuts })).node.textContent);
	assert.ok(!plain.includes('more ('), plain);
	const some = squash((await renderFlows({ flows: fixture('flows.json'), cuts: Object.assign(clone(cuts), { truncated: true, cuts_total: 7000 }) })).node.textContent);
	assert.ok(some.includes('\u2026 and 6998 more (7000 in all)'), some);
});

test('flows view: clicking a column sorts, clicking again reverses', async () => {
	const { node } = await renderFlows({ flows: fixture('flows.json'), cuts: fixture('cuts.json') });
	const th = (label) => node.findAll((n) => n.tag == 'th' && squash(n.textContent).startsWith(label))[0];
	th('Source').fire('click');
	assert.deepEqual(rowIds(node), [3405691582, 99, 17], 'ascending source address, IPv4 first');
	assert.ok(squash(th('Source').textContent).endsWith('\u25b2'));
	th('Source').fire('click');
	assert.deepEqual(rowIds(node), [17, 99, 3405691582]);
	th('Offloaded').fire('click');
	assert.deepEqual(rowIds(node), [99, 3405691582, 17], 'hardware, software, none');
});

test('flows view: the search box filters on the client, the selects ask the daemon', async () => {
	const { rt, node } = await renderFlows({
		flows: (p) => {
			const all = fixture('flows.json');
			if (p.offload == 'hardware')
				all.flows = all.flows.filter((f) => f.offload == 'hardware');
			return all;
		},
		cuts: fixture('cuts.json')
	});
	const search = node.findAll((n) => n.tag == 'input' && n.attrs.id == 'fastpath-search')[0];
	search.fire('input', { target: { value: '2001:db8:2' } });
	assert.deepEqual(rowIds(node), [17]);
	assert.ok(squash(node.textContent).includes('Showing 1 of 40 flows.'));
	search.fire('input', { target: { value: '' } });
	const offload = node.findAll((n) => n.tag == 'select')[0];
	await offload.fire('change', { target: { value: 'hardware' } });
	assert.deepEqual(rt.calls.slice(-2).map((c) => [c.method, c.params]), [['flows', { offload: 'hardware', limit: 500 }], ['cuts', {}]]);
	assert.deepEqual(rowIds(node), [99]);
	const address = node.findAll((n) => n.tag == 'input' && n.attrs.placeholder == '192.168.1.23')[0];
	await address.fire('change', { target: { value: ' 192.168.1.40 ' } });
	assert.deepEqual(rt.calls.slice(-2)[0].params, { offload: 'hardware', address: '192.168.1.40', limit: 500 });
});

test('flows view: a filter the daemon refuses is shown, not an empty list', async () => {
	const { node } = await renderFlows({
		flows: (p) => (p.address == 'nonsense' ? { error: 'address: "nonsense" is not an IP address or prefix' } : fixture('flows.json')),
		cuts: fixture('cuts.json')
	});
	const address = node.findAll((n) => n.tag == 'input' && n.attrs.placeholder == '192.168.1.23')[0];
	await address.fire('change', { target: { value: 'nonsense' } });
	const text = squash(node.textContent);
	assert.ok(text.includes('The daemon refused the filter: address: "nonsense" is not an IP address or prefix'), text);
	await address.fire('change', { target: { value: '' } });
	assert.ok(!squash(node.textContent).includes('refused'), 'the warning goes once the filter is accepted');
	assert.equal(rowIds(node).length, 3);
});

test('flows view: rates come from two polls', async () => {
	const { view } = await renderFlows({ flows: fixture('flows.json'), cuts: fixture('cuts.json') });
	const a = fixture('flows.json');
	const b = clone(a);
	b.flows[0].bytes += 6250000; // 50 Mbit in 5 s
	view.update([a, fixture('cuts.json')], 1000);
	view.update([b, fixture('cuts.json')], 6000);
	const text = squash(view.renderFlowTable().textContent);
	assert.ok(text.includes('182733 packets, 245.96 MiB 10.00 Mbit/s'), text);
	assert.ok(text.includes('Hardware not counted by the hardware \u2013 1m 59s'), 'a flow without counters has no rate: ' + text);
});

test('flows view: Cut asks for a reason, then cuts the original tuple', async () => {
	let cutArgs = null;
	const { rt, node } = await renderFlows({
		flows: fixture('flows.json'),
		cuts: fixture('cuts.json'),
		cut: (p) => { cutArgs = p; return { cuts: [fixture('cuts.json').cuts[1]] }; }
	});
	const row = node.findAll((n) => n.attrs['data-flow'] == '17')[0];
	const done = button(row, 'Cut…').fire('click');
	assert.equal(rt.modals[0].title, 'Cut this connection?');
	const modalText = squash(rt.modals[0].node.textContent);
	assert.ok(modalText.includes('UDP [2001:db8:1::23]:53000 \u2192 [2001:db8:2::53]:53'), modalText);
	assert.ok(modalText.includes('10s after the last one'), modalText);
	const reason = rt.modals[0].node.findAll((n) => n.tag == 'input')[0];
	reason.value = 'DNS to an unknown resolver';
	button(rt.modals[0].node, 'Cut').fire('click');
	await done;
	assert.deepEqual(cutArgs, { proto: 'udp', src: '2001:db8:1::23', dst: '2001:db8:2::53', sport: 53000, dport: 53, reason: 'DNS to an unknown resolver' });
	assert.equal(rt.notifications[0].cls, 'info');
	assert.deepEqual(rt.calls.slice(-2).map((c) => c.method), ['flows', 'cuts'], 'the page refreshes after a cut');
});

test('flows view: only TCP and UDP flows have a Cut button', async () => {
	const answer = fixture('flows.json');
	const ping = clone(answer.flows[0]);
	ping.id = 5;
	ping.proto = ping.original.proto = ping.reply.proto = 'icmp';
	ping.original.sport = ping.original.dport = 0;
	answer.flows.push(ping);
	const { node } = await renderFlows({ flows: answer, cuts: fixture('cuts.json') });
	const buttons = (id) => node.findAll((n) => n.attrs['data-flow'] == String(id))[0].findAll((n) => n.tag == 'button' && squash(n.textContent) == 'Cut…').length;
	assert.equal(buttons(5), 0);
	assert.equal(buttons(17), 1);
});

const whyAnswer = (flow, reasons) => ({
	connections: [{
		flow, where: 'slow path', summary: 'slow path: fewer packets than offload_after_packets',
		reasons, sides: [{ address: flow.original.src, device: 'br-lan', from: 'route' }, { address: flow.original.dst, device: 'wan', from: 'route' }]
	}],
	total: 1, limit: 20, truncated: false
});

const whyButtons = (node, id) => node.findAll((n) => n.attrs['data-flow'] == String(id))[0].findAll((n) => n.tag == 'button' && squash(n.textContent) == 'Why?');

test('flows view: a Why? button on each flow not offloaded, for a read-only login too', async () => {
	for (const readonly of [false, true]) {
		const rt = makeRuntime({ flows: fixture('flows.json'), cuts: fixture('cuts.json') }, undefined, { readonly });
		const view = rt.load('view.fastpath.flows');
		const node = await Promise.resolve(view.render(await view.load()));
		assert.equal(whyButtons(node, 17).length, 1, 'flow 17 is not offloaded');
		assert.equal(whyButtons(node, 3405691582).length, 0, 'flow 3405691582 is offloaded in software');
		assert.equal(whyButtons(node, 99).length, 0, 'flow 99 is offloaded in hardware');
	}
});

test('flows view: Why? asks `why` for the flow\'s 5-tuple and shows where it is and each reason as text', async () => {
	const flow = fixture('flows.json').flows[1];
	const { rt, node } = await renderFlows({
		flows: fixture('flows.json'),
		cuts: fixture('cuts.json'),
		why: whyAnswer(flow, [
			{ code: 'packets', blocks: true, text: 'fewer packets than <b>x</b>', evidence: '12 packets so far', fix: 'wait for more packets' },
			{ code: 'device-maybe', blocks: false, text: 'the client may be behind a port outside the flowtable', evidence: 'br-lan has ports lan1, wlan0' }
		])
	});
	await whyButtons(node, 17)[0].fire('click');
	assert.deepEqual(rt.calls.slice(-1)[0], { object: 'fastpath', method: 'why', params: { proto: 'udp', src: '2001:db8:1::23', dst: '2001:db8:2::53', sport: 53000, dport: 53 } });
	assert.equal(rt.modals.length, 1);
	assert.equal(rt.modals[0].title, 'Why is this flow not offloaded?');
	const m = rt.modals[0].node;
	const text = squash(m.textContent);
	for (const want of [
		'UDP [2001:db8:1::23]:53000 \u2192 [2001:db8:2::53]:53',
		'Where: slow path: every packet goes through the firewall',
		'Blocks: fewer packets than <b>x</b> Evidence: 12 packets so far Fix: wait for more packets',
		'Maybe: the client may be behind a port outside the flowtable Evidence: br-lan has ports lan1, wlan0'
	])
		assert.ok(text.includes(want), `the Why? dialog lacks "${want}": ${text}`);
	assert.ok(!text.includes('Fix: ') || text.indexOf('Fix: ') == text.lastIndexOf('Fix: '), 'a reason without a fix shows none');
	assert.equal(m.findAll((n) => n.tag == 'b').length, 0, 'a reason\'s markup became an element');
	assert.equal(m.findAll((n) => n.tag == 'li').length, 2);
	assert.ok(!text.includes('slow path: fewer packets than offload_after_packets'), 'the summary repeats the first reason');
	assertNoJunk(text, 'the Why? dialog');
	button(m, 'Close').fire('click');
	assert.equal(rt.modals[0].open, false);
});

test('flows view: Why? on a flow without ports asks by address and shows only that flow', async () => {
	const answer = fixture('flows.json');
	const ping = clone(answer.flows[1]);
	ping.id = 5;
	ping.proto = ping.original.proto = ping.reply.proto = 'icmpv6';
	ping.original.sport = ping.original.dport = 0;
	answer.flows.push(ping);
	const other = whyAnswer(answer.flows[1], [{ code: 'packets', blocks: true, text: 'not this one', evidence: '' }]).connections[0];
	const mine = whyAnswer(ping, [{ code: 'proto', blocks: true, text: 'icmpv6 is not TCP or UDP', evidence: 'conntrack: icmpv6' }]);
	mine.connections.unshift(other);
	const { rt, node } = await renderFlows({ flows: answer, cuts: fixture('cuts.json'), why: mine });
	await whyButtons(node, 5)[0].fire('click');
	assert.deepEqual(rt.calls.slice(-1)[0].params, { address: '2001:db8:1::23', limit: 100 });
	const text = squash(rt.modals[0].node.textContent);
	assert.ok(text.includes('Blocks: icmpv6 is not TCP or UDP Evidence: conntrack: icmpv6'), text);
	assert.ok(!text.includes('not this one'), text);
});

test('flows view: Why? with no match, a refusal or a failed call says so in words', async () => {
	const cases = [
		[{ connections: [], total: 0, limit: 20 }, 'No connection matches: conntrack holds no entry for it any more'],
		[{ error: 'dport: <i>0</i> is out of range' }, 'The daemon could not explain it: dport: <i>0</i> is out of range'],
		[rpcError(-32000, 'Object not found'), 'The daemon could not explain it: RPC call to fastpath/why failed with error -32000: Object not found'],
		[7, 'The daemon could not explain it: The fastpath daemon refused the request (ubus status 7).']
	];
	for (const [why, want] of cases) {
		const { rt, node } = await renderFlows({ flows: fixture('flows.json'), cuts: fixture('cuts.json'), why });
		await whyButtons(node, 17)[0].fire('click');
		const m = rt.modals[0].node;
		const text = squash(m.textContent);
		assert.ok(text.includes(want), `the Why? dialog lacks "${want}": ${text}`);
		assert.equal(m.findAll((n) => n.tag == 'i').length, 0, 'the daemon\'s error became markup');
		assertNoJunk(text, 'the Why? dialog');
	}
});

test('flows view: a refused cut shows the daemon\'s words', async () => {
	const { rt, node } = await renderFlows({ flows: fixture('flows.json'), cuts: fixture('cuts.json'), cut: { error: 'cut: the fastpath cut tables are not loaded' } });
	const done = button(node, 'Cut…').fire('click');
	button(rt.modals[0].node, 'Cut').fire('click');
	await done;
	assert.equal(rt.notifications[0].cls, 'danger');
	assert.equal(rt.notifications[0].text, 'The connection was not cut: cut: the fastpath cut tables are not loaded');
});

test('flows view: Release uncuts the cut\'s tuple and says when nothing was left', async () => {
	const released = [];
	const { rt, node } = await renderFlows({
		flows: fixture('flows.json'),
		cuts: fixture('cuts.json'),
		uncut: (p) => { released.push(p); return { released: released.length == 1 ? 1 : 0 }; }
	});
	await button(node, 'Release').fire('click');
	assert.deepEqual(released[0], { proto: 'udp', src: '192.168.1.23', dst: '203.0.113.9', sport: 40000, dport: 5201 });
	assert.deepEqual(rt.notifications.map((n) => [n.cls, n.text]), [['info', 'Released 192.168.1.23:40000 \u2192 203.0.113.9:5201.']]);
	await button(node, 'Release').fire('click');
	assert.equal(rt.notifications[1].text, 'Nothing to release: the cut had already expired.');
});

test('flows view: no flows, no cuts', async () => {
	const { node } = await renderFlows({ flows: { flows: null, total: 0 }, cuts: { enabled: true, in_fastpath: true, devices: null, cuts: null, expiry_s: 10 } });
	const text = squash(node.textContent);
	assert.ok(text.includes('Showing 0 of 0 flows.') && text.includes('No flow matches.') && text.includes('No connection is cut.'), text);
	assertNoJunk(text, 'empty flows page');
});

const CONTRACT = {
	main: ['enabled', 'hw_offload', 'sqm_policy', 'offload_after_packets', 'recheck_on_rule_change', 'cut_in_fastpath', 'cut_backend', 'xdp_forward', 'cut_expiry', 'cut_set_size', 'cut_min_prefix4', 'cut_min_prefix6', 'log_level', 'device'],
	blocklist: ['enabled', 'name', 'type', 'family', 'table', 'set', 'path', 'address']
};

async function renderSettings(without) {
	const uci = {
		fastpath: {
			main: { '.type': 'fastpath', enabled: '1', hw_offload: 'auto', cut_in_fastpath: '1', cut_expiry: '10' },
			cfg01: { '.type': 'blocklist', name: 'banip', type: 'nftset', family: 'inet', table: 'banIP', set: 'blocklist.v4' },
			cfg02: { '.type': 'blocklist', name: 'manual', type: 'list', address: ['198.51.100.7', '2001:db8:bad::/48'] }
		},
		firewall: { cfg01: { '.type': 'defaults', flow_offloading: '1', flow_offloading_hw: '1' } }
	};
	for (const sid of without || [])
		delete uci.fastpath[sid];
	const rt = makeRuntime({}, uci);
	const view = rt.load('view.fastpath.settings');
	await view.load();
	await view.render();
	return { rt, map: rt.modules.form.maps[0] };
}

test('settings: a form.Map over /etc/config/fastpath with every option of the contract', async () => {
	const { rt, map } = await renderSettings();
	assert.deepEqual(rt.modules.uci.loaded, ['fastpath', 'firewall']);
	assert.equal(rt.modules.form.maps.length, 1);
	assert.equal(map.config, 'fastpath');
	const [main, lists] = map.sections;
	assert.equal(main.kind, 'NamedSection');
	assert.deepEqual(main.args.slice(0, 2), ['main', 'fastpath']);
	assert.equal(lists.kind, 'GridSection');
	assert.equal(lists.args[0], 'blocklist');
	assert.equal(lists.addremove, true);
	const real = (s) => s.options.map((o) => o.option).filter((n) => !n.startsWith('_'));
	assert.deepEqual(real(main).sort(), CONTRACT.main.slice().sort());
	assert.deepEqual(real(lists).sort(), CONTRACT.blocklist.slice().sort());
	const opt = (s, n) => s.options.find((o) => o.option == n);
	assert.deepEqual(opt(main, 'hw_offload').values.map((v) => v[0]), ['follow', 'auto', 'off']);
	assert.equal(opt(main, 'hw_offload').default, 'follow');
	assert.equal(opt(main, 'cut_expiry').default, '10');
	assert.equal(opt(main, 'cut_set_size').default, '65536');
	assert.equal(opt(main, 'offload_after_packets').datatype, 'range(0,100000)');
	assert.equal(opt(main, 'recheck_on_rule_change').default, '1');
	assert.equal(opt(main, 'recheck_on_rule_change').rmempty, false);
	assert.deepEqual(opt(main, 'sqm_policy').values.map((v) => v[0]), ['prefer_sqm', 'prefer_hw']);
	assert.deepEqual(opt(lists, 'type').values.map((v) => v[0]), ['nftset', 'banip', 'crowdsec', 'file', 'list']);
	assert.deepEqual(opt(lists, 'table').deps, [{ type: 'nftset' }]);
	assert.deepEqual(opt(lists, 'path').deps, [{ type: 'file' }]);
	assert.deepEqual(opt(lists, 'address').deps, [{ type: 'list' }]);
	assert.equal(opt(lists, 'address').datatype, 'ipaddr');
});

test('settings: the main section can be added only when the file lacks it', async () => {
	assert.equal((await renderSettings()).map.sections[0].addremove, false);
	assert.equal((await renderSettings(['main'])).map.sections[0].addremove, true);
});

test('settings: the firewall\'s switch and each list\'s source read in words', async () => {
	const { map } = await renderSettings();
	const [main, lists] = map.sections;
	const fw = main.options.find((o) => o.option == '_firewall');
	assert.equal(fw.cfgvalue('main'), 'Hardware offload');
	assert.equal(fw.href, '/cgi-bin/luci/admin/network/firewall');
	const src = lists.options.find((o) => o.option == '_source');
	assert.equal(src.cfgvalue('cfg01'), 'nftables set inet banIP blocklist.v4');
	assert.equal(src.cfgvalue('cfg02'), '2 addresses listed here');
});

// The shipped config keeps only what uci writes (no comments: LuCI's Save &
// Apply drops them); its options are documented in package/README.md.
test('settings: edits every option of the packaged /etc/config/fastpath and of its documentation, and those document every option it edits', () => {
	const root = path.resolve(__dirname, '..', '..');
	const config = fs.readFileSync(path.join(root, 'files', 'fastpath.config'), 'utf8');
	assert.ok(!/^\s*#/m.test(config), 'files/fastpath.config has comments, which the first Save & Apply drops');
	const readme = fs.readFileSync(path.join(root, 'package', 'README.md'), 'utf8');
	const start = readme.indexOf('\n## /etc/config/fastpath\n');
	assert.ok(start >= 0, 'package/README.md has no "## /etc/config/fastpath" section');
	const doc = readme.slice(start).split(/\n## /)[1];
	const optionNames = (text) => new Set(text.split('\n').map((l) => /^\s*(?:option|list)\s+([a-z0-9_]+)\s/.exec(l)).filter(Boolean).map((m) => m[1]));
	const documented = new Set([...optionNames(doc), ...doc.split('\n').map((l) => /^\| `([a-z0-9_]+)`/.exec(l)).filter(Boolean).map((m) => m[1])]);
	const edited = new Set(CONTRACT.main.concat(CONTRACT.blocklist));
	for (const n of optionNames(config))
		assert.ok(edited.has(n), `files/fastpath.config has option ${n}, which the settings page does not edit`);
	for (const n of documented)
		assert.ok(edited.has(n), `package/README.md documents option ${n}, which the settings page does not edit`);
	for (const n of edited)
		assert.ok(documented.has(n), `the settings page edits option ${n}, which package/README.md does not document`);
});

test('overview include: one line; access denied and a missing daemon said as such', async () => {
	const rt = makeRuntime({ status: fixture('status.json') });
	const inc = rt.load('view.status.include.70_fastpath');
	assert.equal(inc.title, 'Flow offload');
	const node = inc.render(await inc.load());
	assert.equal(squash(node.textContent), 'Software offload (hardware offload requested) \u2014 12 of 40 flows offloaded, 0 in hardware ( details )');
	assert.deepEqual(rt.calls.map((c) => c.method), ['status']);

	const denied = makeRuntime({ status: rpcError(-32002, 'Access denied') }).load('view.status.include.70_fastpath');
	assert.equal(squash(denied.render(await denied.load()).textContent), 'Access denied: this login may not read fastpath\'s status.');
	const gone = makeRuntime({ status: rpcError(-32000, 'Object not found') }).load('view.status.include.70_fastpath');
	assert.equal(squash(gone.render(await gone.load()).textContent), 'The fastpath daemon does not answer.');
});

test('status view: each device\'s cut backend and its reason, as text', async () => {
	const st = JSON.parse(JSON.stringify(fixture('status.json')));
	st.cut.backends = [
		{ device: 'eth0', backend: 'xdp', reason: 'native XDP in the driver (program 42)' },
		{ device: 'br-lan', backend: 'netdev', reason: 'the driver of br-lan has no native XDP: <b>operation not supported</b>; cutting at netdev ingress' }
	];
	const { node, text } = await renderStatus({ status: st, capabilities: fixture('capabilities.json') });
	for (const want of [
		'Device Cut frames dropped by Why',
		'eth0 native XDP in the driver native XDP in the driver (program 42)',
		'br-lan netdev ingress table the driver of br-lan has no native XDP: <b>operation not supported</b>; cutting at netdev ingress'
	])
		assert.ok(text.includes(want), `status page lacks "${want}"`);
	assert.equal(node.findAll((n) => n.tag == 'b').length, 0, 'a reason\'s markup became an element');
});
