'use strict';
// The offload engine's own proof on the status page: bound entries beside
// conntrack's count, and a plain warning where the hardware flows carry no
// byte counters (MT7621: nlbwmon and the connection list miss them).

const test = require('node:test');
const assert = require('node:assert/strict');
const { makeRuntime, squash } = require('./lib/luci');
const { fixture } = require('./lib/answers');

const MARKUP = '<img src=x onerror=alert(1)>';

function withHW(hw) {
	const st = fixture('status.json');
	st.flows = { total: 40, offloaded: 12, hw_offloaded: 3 };
	st.hw_flows = hw;
	return st;
}

async function render(st) {
	const rt = makeRuntime({ status: st });
	const view = rt.load('view.fastpath.status');
	const node = await Promise.resolve(view.render(await view.load()));
	return { node, text: squash(node.textContent) };
}

test('MT7621: bound entries, the reason as text, and the missing counters said plainly', async () => {
	const reason = 'hardware flows in the PPE, one entry per direction: ppe0: 6 bound (IPv4 5T 4, IPv6 5T 2); MT7621\'s PPE keeps no byte counters for its flows' + MARKUP;
	const { node, text } = await render(withHW({ engine: 'MediaTek PPE', read: true, bound: 6, counters: false, reason, tables: [ { name: 'ppe0', bound: 6 } ] }));
	for (const want of [
		'12 of 40 tracked flows are offloaded: 9 in software, 3 in hardware.',
		'6 entries are bound in the MediaTek PPE (one per direction of a flow).',
		'ppe0: 6 bound (IPv4 5T 4, IPv6 5T 2)',
		'This chip\'s hardware flows carry no byte counters: once a flow is offloaded in hardware, its traffic is missing from conntrack\'s counts, nlbwmon and the connection list.'
	])
		assert.ok(text.includes(want), `status page lacks "${want}": ${text}`);
	assert.ok(text.includes(MARKUP), 'the reason is shown as text');
	assert.deepEqual(node.findAll((n) => n.fromHTML).map((n) => n.tag), [], 'daemon text became elements');
});

test('MT7622 with counters: not read, and no warning', async () => {
	const { text } = await render(withHW({ engine: 'MediaTek PPE', read: false, counters: true, reason: 'MT7622\'s PPE counts the bytes of each hardware flow' }));
	assert.ok(text.includes('The MediaTek PPE counts the bytes of its hardware flows: conntrack\'s counts include their traffic.'), text);
	assert.ok(!text.includes('carry no byte counters'), text);
});

test('no debugfs, and no engine at all', async () => {
	let { text } = await render(withHW({ engine: 'MediaTek PPE', read: false, counters: false, reason: 'no PPE table to read' }));
	assert.ok(text.includes('The MediaTek PPE\'s tables cannot be read (debugfs is not mounted, or no engine runs).'), text);
	assert.ok(text.includes('carry no byte counters'), text);
	({ text } = await render(fixture('status.json')));
	assert.ok(!text.includes('entries are bound') && !text.includes('byte counters'), 'QCA9558 has no engine to speak of');
});
