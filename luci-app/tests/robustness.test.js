'use strict';
// The daemon's answers are outside input to the views: answers with fields
// missing, null, or of the wrong type must render without throwing and
// without "undefined"/"NaN" on the page. Seeded, so a failure reproduces;
// FASTPATH_FUZZ_SEED and FASTPATH_FUZZ_RUNS explore further.

const test = require('node:test');
const assert = require('node:assert/strict');
const { makeRuntime, squash } = require('./lib/luci');
const { fixture } = require('./lib/answers');

const RUNS = +process.env.FASTPATH_FUZZ_RUNS || 300;
const SEED = +process.env.FASTPATH_FUZZ_SEED || 7;

// mulberry32: small, seedable, good enough to pick mutations.
function rng(seed) {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

const ODD = [null, undefined, '', 'x', 0, -1, 1e21, true, [], {}, [null], { error: 'boom' }];

// Replaces a few values anywhere in the tree with odd ones, or drops keys.
function mutate(value, rand) {
	const v = JSON.parse(JSON.stringify(value));
	const paths = [];
	(function walk(node, parent, key) {
		if (parent)
			paths.push([parent, key]);
		if (node && typeof node == 'object')
			for (const k of Object.keys(node))
				walk(node[k], node, k);
	})(v, null, null);
	const n = 1 + Math.floor(rand() * 4);
	for (let i = 0; i < n && paths.length; i++) {
		const [parent, key] = paths[Math.floor(rand() * paths.length)];
		if (rand() < 0.3)
			delete parent[key];
		else
			parent[key] = ODD[Math.floor(rand() * ODD.length)];
	}
	return v;
}

function clean(text, seed, where) {
	for (const junk of ['undefined', 'NaN', '[object Object]'])
		assert.ok(!text.includes(junk), `${where} (seed ${seed}) shows "${junk}": ${text}`);
}

test('status view and overview survive malformed status answers', async () => {
	const base = fixture('status.json');
	const caps = fixture('capabilities.json');
	for (let i = 0; i < RUNS; i++) {
		const seed = SEED * 100000 + i;
		const r = rng(seed);
		const st = mutate(base, r);
		const rt = makeRuntime({ status: st, capabilities: mutate(caps, r) });
		const view = rt.load('view.fastpath.status');
		let text;
		try {
			text = squash(view.render(await view.load()).textContent);
		} catch (e) {
			assert.fail(`status view threw on seed ${seed}: ${e.stack}\n${JSON.stringify(st)}`);
		}
		clean(text, seed, 'status view');
		const line = rt.load('view.status.include.70_fastpath').render(st);
		clean(squash(line.textContent), seed, 'overview line');
	}
});

test('flows view survives malformed flows and cuts answers', async () => {
	const flows = fixture('flows.json');
	const cuts = fixture('cuts.json');
	for (let i = 0; i < RUNS; i++) {
		const seed = SEED * 100000 + i;
		const r = rng(seed);
		const f = mutate(flows, r);
		const c = mutate(cuts, r);
		const rt = makeRuntime({ flows: f, cuts: c });
		const view = rt.load('view.fastpath.flows');
		let text;
		try {
			const node = view.render(await view.load());
			text = squash(node.textContent);
			view.handleSort('src');
			view.handleSort('rate');
		} catch (e) {
			assert.fail(`flows view threw on seed ${seed}: ${e.stack}\n${JSON.stringify([f, c])}`);
		}
		clean(text, seed, 'flows view');
	}
});

// Every string the daemon sends, with markup in it: real LuCI's dom.append
// puts a lone string in with innerHTML, and the stand-in does the same, so
// any such text that is not wrapped as a text node becomes an element here.
function withMarkup(value) {
	if (typeof value == 'string')
		return `${value}<img src=x onerror=alert(1)>`;
	if (Array.isArray(value))
		return value.map(withMarkup);
	if (value && typeof value == 'object')
		return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withMarkup(v)]));
	return value;
}

function noMarkup(node, where) {
	const made = node.findAll((n) => n.fromHTML).map((n) => n.tag);
	assert.deepEqual(made, [], `${where}: text from the daemon became elements`);
	assert.ok(!squash(node.textContent).includes('[object'), `${where}: a nested list reads "[object ...]"`);
}

test('every text of the daemon\'s answers reaches the views as text, also for read-only logins', async () => {
	for (const readonly of [false, true]) {
		const st = withMarkup(fixture('status.json'));
		const rt = makeRuntime({ status: st, capabilities: withMarkup(fixture('capabilities.json')), flows: withMarkup(fixture('flows.json')), cuts: withMarkup(fixture('cuts.json')) }, undefined, { readonly });
		const status = rt.load('view.fastpath.status');
		noMarkup(status.render(await status.load()), 'status view');
		const flows = rt.load('view.fastpath.flows');
		noMarkup(flows.render(await flows.load()), 'flows view');
		noMarkup(rt.load('view.status.include.70_fastpath').render(st), 'overview line');
	}
});
