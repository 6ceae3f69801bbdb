'use strict';
// The shaping and the views against answers recorded from the real daemon's
// ubus object (luci-app/tests/recorded/*.json, written by the recorder test).
// Expectations are derived from each answer, so any honest recording passes
// and a change of shape in the daemon fails here.

const test = require('node:test');
const assert = require('node:assert/strict');
const { makeRuntime, squash } = require('./lib/luci');
const { recorded } = require('./lib/answers');

const JUNK = ['undefined', 'NaN', '[object Object]'];

function clean(text, where) {
	for (const j of JUNK)
		assert.ok(!text.includes(j), `${where} shows "${j}": ${text}`);
}

function isList(v) {
	return v === null || Array.isArray(v);
}

test('recorded status: the fields the views read have their Go types', () => {
	const st = recorded('status.json');
	assert.equal(typeof st.version, 'string');
	for (const k of ['requested', 'effective', 'reason'])
		assert.equal(typeof st.mode[k], 'string', `mode.${k}`);
	assert.ok(['off', 'software', 'hardware'].includes(st.mode.effective), `mode.effective ${st.mode.effective}`);
	assert.ok(isList(st.decisions) && isList(st.tunnels), 'decisions and tunnels are lists');
	assert.equal(typeof st.platform.soc, 'string');
	assert.equal(typeof st.platform.hw_offload_capable, 'boolean');
	assert.equal(typeof st.flowtable.in_sync, 'boolean');
	assert.equal(typeof st.flowtable.kernel.table_present, 'boolean');
	for (const k of ['total', 'offloaded', 'hw_offloaded'])
		assert.equal(typeof st.flows[k], 'number', `flows.${k}`);
	assert.ok(st.flows.hw_offloaded <= st.flows.offloaded && st.flows.offloaded <= st.flows.total, JSON.stringify(st.flows));
	assert.equal(typeof st.kernel.flowtable, 'boolean');
	assert.equal(typeof st.cut.enabled, 'boolean');
	assert.equal(typeof st.cut.expiry_s, 'number');
});

test('recorded status: plain-word sentences match what the daemon says runs', () => {
	const fmt = makeRuntime({}).load('fastpath.format');
	const st = recorded('status.json');
	const s = fmt.modeSentence(st);
	clean(s, 'mode sentence');
	const eff = st.mode.effective;
	if (eff == 'software')
		assert.match(s, /offloaded in software/);
	else if (eff == 'hardware')
		assert.match(s, /offloaded in hardware/);
	else
		assert.match(s, /off|not running/);
	const chip = fmt.chip(st.platform);
	if (eff == 'software' && st.mode.requested == 'hardware' && !st.platform.hw_offload_capable && chip)
		assert.equal(s, `Hardware offload is not possible on ${chip}; flows are offloaded in software.`);
	const counts = fmt.flowCountsSentence(st.flows);
	if (st.flows.total > 0)
		assert.ok(counts.includes(String(st.flows.total)), counts);
	const ft = fmt.flowtableState(st.flowtable);
	assert.equal(ft.in_sync, st.flowtable.in_sync);
	assert.equal(ft.kernel_devices, (st.flowtable.kernel.devices || []).join(', ') || 'none');
	clean(fmt.overviewLine(st), 'overview line');
});

test('recorded status: the status view renders it completely', async () => {
	const st = recorded('status.json');
	const rt = makeRuntime({ status: st, capabilities: recorded('capabilities.json') });
	const fmt = rt.load('fastpath.format');
	const view = rt.load('view.fastpath.status');
	const text = squash(view.render(await view.load()).textContent);
	clean(text, 'status page');
	const want = [fmt.modeSentence(st), fmt.flowCountsSentence(st.flows), fmt.flowtableState(st.flowtable).sentence, fmt.cutSummarySentence(st.cut)]
		.concat((st.tunnels || []).map(fmt.tunnelSentence))
		.concat((st.platform.evidence || []).map((e) => e.source))
		.concat(st.kernel.missing || [])
		.concat(st.errors || []);
	for (const w of want)
		assert.ok(text.includes(squash(w)), `status page lacks "${w}"`);
});

test('recorded flows: shape, and one table row per flow', async () => {
	const answer = recorded('flows.json');
	const cuts = recorded('cuts.json');
	assert.ok(isList(answer.flows), 'flows is a list');
	assert.equal(typeof answer.total, 'number');
	const flows = answer.flows || [];
	assert.ok(answer.total >= flows.length, `total ${answer.total} < ${flows.length} flows`);
	for (const f of flows) {
		assert.equal(typeof f.id, 'number');
		assert.ok(['', 'software', 'hardware'].includes(f.offload), `flow ${f.id} offload "${f.offload}"`);
		assert.ok(['ipv4', 'ipv6'].includes(f.family), `flow ${f.id} family "${f.family}"`);
		for (const dir of ['original', 'reply'])
			for (const k of ['src', 'dst'])
				assert.equal(typeof f[dir][k], 'string', `flow ${f.id} ${dir}.${k}`);
	}
	const rt = makeRuntime({ flows: answer, cuts });
	const fmt = rt.load('fastpath.format');
	const view = rt.load('view.fastpath.flows');
	const node = view.render(await view.load());
	const rows = node.findAll((n) => n.attrs['data-flow'] !== undefined);
	assert.equal(rows.length, flows.length);
	flows.forEach((f) => {
		const row = rows.find((r) => r.attrs['data-flow'] == String(f.id));
		assert.ok(row, `no row for flow ${f.id}`);
		const t = squash(row.textContent);
		clean(t, `row of flow ${f.id}`);
		assert.ok(t.includes(fmt.endpoint(f.original.src, f.original.sport)), t);
		assert.ok(t.includes(fmt.offloadLabel(f.offload)), t);
	});
	clean(squash(node.textContent), 'flows page');
});

test('recorded cuts: the summary and every active cut read in words', () => {
	const s = recorded('cuts.json');
	assert.equal(typeof s.enabled, 'boolean');
	assert.equal(typeof s.in_fastpath, 'boolean');
	assert.equal(typeof s.active, 'number');
	assert.ok(isList(s.cuts) && isList(s.blocklists) && isList(s.devices));
	const fmt = makeRuntime({}).load('fastpath.format');
	clean(fmt.cutSummarySentence(s) + fmt.cutCountsSentence(s), 'cut summary');
	for (const c of s.cuts || []) {
		assert.ok(['tcp', 'udp'].includes(c.original.proto), `cut proto ${c.original.proto}`);
		assert.equal(typeof c.expires_in_s, 'number');
		const row = fmt.cutRow(c, Date.now());
		clean(Object.values(row).join(' '), 'cut row');
		assert.deepEqual(Object.keys(fmt.uncutArgs(c)), ['proto', 'src', 'dst', 'sport', 'dport']);
	}
	for (const b of s.blocklists || [])
		clean(fmt.blocklistLine(b), 'block list line');
});

test('recorded capabilities: the chipset section renders and agrees with status', () => {
	const caps = recorded('capabilities.json');
	const st = recorded('status.json');
	const rt = makeRuntime({});
	const fmt = rt.load('fastpath.format');
	assert.equal(typeof caps.platform, 'object', 'capabilities nests the platform');
	assert.ok(Array.isArray(caps.modes), 'capabilities lists the modes');
	for (const m of caps.modes)
		assert.ok(['off', 'software', 'hardware', 'auto'].includes(m), `capabilities offers unknown mode "${m}"`);
	if (caps.modes.includes('hardware'))
		assert.equal(caps.platform.hw_offload_capable, true, 'hardware is offered only where the chipset can');
	const p = fmt.shapePlatform(caps);
	assert.equal(typeof p.soc, 'string', 'capabilities carries the platform (soc)');
	assert.equal(typeof p.hw_offload_reason, 'string');
	assert.equal(p.soc, st.platform.soc, 'capabilities and status name the same SoC');
	const text = squash(rt.load('view.fastpath.status').renderPlatform(p).textContent);
	clean(text, 'chipset section');
	assert.ok(text.includes(p.hw_offload_reason), text);
	for (const e of p.evidence || [])
		assert.ok(text.includes(squash(e.source)), `chipset section lacks evidence ${e.source}`);
});
