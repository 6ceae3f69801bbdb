'use strict';
// The JSON files rpcd and LuCI read: valid, and in the shapes they expect.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { RESOURCES } = require('./lib/luci');
const { jsFiles } = require('./lib/files');

const ROOT = path.resolve(__dirname, '..', 'root');

function read(rel) {
	const f = path.join(ROOT, rel);
	const src = fs.readFileSync(f, 'utf8');
	try {
		return JSON.parse(src);
	} catch (e) {
		throw new Error(`${f}: not valid JSON: ${e.message}`);
	}
}

const menu = () => read('usr/share/luci/menu.d/luci-app-fastpath.json');
const acl = () => read('usr/share/rpcd/acl.d/luci-app-fastpath.json');

test('menu.d: every entry has a title, an order and a known action', () => {
	const m = menu();
	const keys = Object.keys(m);
	assert.ok(keys.length >= 4, `expected a parent and three tabs, got ${keys}`);
	for (const k of keys) {
		assert.match(k, /^admin\/[a-z]+\/fastpath(\/[a-z]+)?$/, `menu path ${k}`);
		assert.equal(typeof m[k].title, 'string', `${k}.title`);
		assert.equal(typeof m[k].order, 'number', `${k}.order`);
		assert.ok(['view', 'firstchild', 'alias'].includes(m[k].action.type), `${k}.action.type is ${m[k].action.type}`);
	}
});

test('menu.d: the parent is guarded by our ACL and every view file exists', () => {
	const m = menu();
	const parent = m['admin/network/fastpath'];
	assert.ok(parent, 'admin/network/fastpath is missing');
	assert.deepEqual(parent.depends.acl, ['luci-app-fastpath']);
	const views = Object.values(m).filter((e) => e.action.type == 'view').map((e) => e.action.path);
	assert.deepEqual(views.sort(), ['fastpath/flows', 'fastpath/settings', 'fastpath/status']);
	for (const v of views) {
		const f = path.join(RESOURCES, 'view', v + '.js');
		assert.ok(fs.existsSync(f), `menu names view ${v} but ${f} does not exist`);
	}
});

test('acl.d: read sees status, flows, cuts and why; only write may set, cut and release', () => {
	const a = acl();
	assert.deepEqual(Object.keys(a), ['luci-app-fastpath'], 'one group, named like the menu depends');
	const g = a['luci-app-fastpath'];
	assert.equal(typeof g.description, 'string');
	assert.deepEqual(g.read.ubus, { fastpath: ['status', 'capabilities', 'flows', 'cuts', 'why'] });
	assert.deepEqual(g.read.uci, ['fastpath', 'firewall']);
	assert.deepEqual(g.write.ubus, { fastpath: ['set', 'reload', 'cut', 'uncut', 'verdict'] });
	assert.deepEqual(g.write.uci, ['fastpath']);
	const writeOnly = new Set(g.write.ubus.fastpath);
	for (const m of g.read.ubus.fastpath)
		assert.ok(!writeOnly.has(m), `${m} is both read and write`);
});

test('acl.d: every ubus method the views declare is granted, writes only under write', () => {
	const g = acl()['luci-app-fastpath'];
	const read = new Set(g.read.ubus.fastpath);
	const write = new Set(g.write.ubus.fastpath);
	let seen = 0;
	for (const f of jsFiles(RESOURCES)) {
		const src = fs.readFileSync(f, 'utf8');
		const re = /object:\s*'([^']+)',\s*method:\s*'([^']+)'/g;
		let m;
		while ((m = re.exec(src))) {
			seen++;
			assert.equal(m[1], 'fastpath', `${f} calls ubus object ${m[1]}`);
			assert.ok(read.has(m[2]) || write.has(m[2]), `${f} calls fastpath.${m[2]}, which the ACL does not grant`);
		}
	}
	assert.ok(seen >= 7, `found only ${seen} rpc.declare calls`);
});

test('ucitrack: Save & Apply of fastpath reloads the fastpath init script', () => {
	assert.deepEqual(read('usr/share/ucitrack/luci-app-fastpath.json'), { config: 'fastpath', init: 'fastpath' });
});

test('uci-defaults script drops LuCI caches and exits 0', () => {
	const f = path.join(ROOT, 'etc/uci-defaults/80_luci-fastpath');
	const src = fs.readFileSync(f, 'utf8');
	assert.match(src, /^#!\/bin\/sh\n/);
	assert.match(src, /luci-indexcache/);
	assert.match(src, /\nexit 0\n$/);
	assert.ok(fs.statSync(f).mode & 0o111, `${f} must be executable`);
});

// The daemon's own lists (src/rpc/methods.go) are the source of truth for
// which methods only read; the ACL must split them the same way, and every
// argument the views send must be one the object declares.
test('acl.d and the views agree with the ubus object in src/rpc/methods.go', () => {
	const f = path.resolve(__dirname, '..', '..', 'src', 'rpc', 'methods.go');
	assert.ok(fs.existsSync(f), `${f} is missing: the fastpath ubus object defines ReadMethods and WriteMethods there`);
	const go = fs.readFileSync(f, 'utf8');
	const goList = (name) => {
		const m = new RegExp(`var ${name} = \\[\\]string\\{([^}]*)\\}`).exec(go);
		assert.ok(m, `${f}: no ${name}`);
		return m[1].split(',').map((s) => s.trim().replace(/^"|"$/g, '')).filter(Boolean);
	};
	const g = acl()['luci-app-fastpath'];
	assert.deepEqual(g.read.ubus.fastpath, goList('ReadMethods'));
	assert.deepEqual(g.write.ubus.fastpath, goList('WriteMethods'));
	const argNames = new Set(Array.from(go.matchAll(/Name: "([a-z_]+)"/g), (m) => m[1]));
	for (const file of ['view/fastpath/status.js', 'view/fastpath/flows.js']) {
		const src = fs.readFileSync(path.join(RESOURCES, file), 'utf8');
		for (const m of src.matchAll(/params: \[([^\]]*)\]/g))
			for (const p of m[1].split(',').map((s) => s.trim().replace(/^'|'$/g, '')))
				assert.ok(argNames.has(p), `${file} sends argument "${p}", which ${f} does not declare`);
	}
});
