'use strict';
// Every class file follows LuCI's loader rules: only 'use strict' and
// 'require' directives before the code, requires that resolve, and exactly
// one class returned, made by one extend() call.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { RESOURCES, scanRequires, makeRuntime, fileOf } = require('./lib/luci');
const { jsFiles } = require('./lib/files');

// LuCI classes our files may require (all ship with luci-base / luci-mod-status).
const LUCI_CLASSES = new Set(['baseclass', 'view', 'dom', 'poll', 'rpc', 'ui', 'form', 'uci', 'fs', 'network', 'request']);

function classFiles() {
	return jsFiles(RESOURCES);
}

function className(file) {
	return path.relative(RESOURCES, file).replace(/\.js$/, '').split(path.sep).join('.');
}

test('the class files are the four views, the overview include, format and page', () => {
	assert.deepEqual(classFiles().map(className), [
		'fastpath.format',
		'fastpath.page',
		'view.fastpath.flows',
		'view.fastpath.settings',
		'view.fastpath.status',
		'view.status.include.70_fastpath'
	]);
});

for (const file of classFiles()) {
	const name = className(file);

	test(`${name}: header is 'use strict' then 'require' lines only`, () => {
		const src = fs.readFileSync(file, 'utf8');
		const lines = src.split('\n');
		assert.equal(lines[0], "'use strict';", `${file}:1 must be 'use strict';`);
		const { deps, headerEnd } = scanRequires(src);
		assert.ok(deps.length > 0, `${file}: no 'require' directive`);
		const header = src.slice(0, Math.max(src.indexOf('\n', src.lastIndexOf("'require ")), 0));
		header.split('\n').slice(1).forEach((l, i) =>
			assert.match(l, /^'require [a-z0-9_.]+( as [a-zA-Z_]+)?';$/, `${file}:${i + 2} "${l}" is not a require directive`));
		assert.equal(deps.length, header.split('\n').length - 1, `${file}: a require after other code is ignored by LuCI`);
		assert.ok(headerEnd >= header.length, `${file}: the scanner stopped inside the header`);
		for (const d of deps)
			assert.ok(LUCI_CLASSES.has(d.name) || fs.existsSync(fileOf(d.name)), `${file}: 'require ${d.name}' is neither a LuCI class nor one of ours`);
	});

	test(`${name}: parses as LuCI's function body and returns one extended class`, () => {
		const src = fs.readFileSync(file, 'utf8');
		assert.doesNotThrow(() => new vm.Script(`(function(window, document, L) { ${src}\n})`, { filename: file }));
		const rt = makeRuntime({}, {});
		const instance = rt.load(name);
		assert.equal(instance.__extends, 1, `${file}: ${instance.__extends} extend() calls`);
		const expectedBase = name.startsWith('view.fastpath.') ? 'view' : 'baseclass';
		assert.equal(instance.__base, expectedBase, `${file} must return ${expectedBase}.extend({...})`);
		assert.equal(typeof instance.render == 'function' || name.startsWith('fastpath.'), true, `${file}: no render()`);
	});
}

test('the views with their own buttons turn off the form buttons; settings keeps Save & Apply', () => {
	const rt = makeRuntime({}, {});
	for (const v of ['view.fastpath.status', 'view.fastpath.flows']) {
		const i = rt.load(v);
		assert.equal(i.handleSaveApply, null, `${v}.handleSaveApply`);
		assert.equal(i.handleSave, null, `${v}.handleSave`);
		assert.equal(i.handleReset, null, `${v}.handleReset`);
	}
	assert.equal(rt.load('view.fastpath.settings').handleSaveApply, undefined, 'settings must inherit view.handleSaveApply');
});
