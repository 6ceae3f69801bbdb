'use strict';
// po/templates/fastpath.pot holds every translatable string, and only those.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { POT, extract, render, parsePot } = require('./lib/pot');

const REGEN = 'run `node luci-app/tests/lib/pot.js` to regenerate it';

test('every _() and N_() call has literal strings the scanner can read', () => {
	const r = extract();
	assert.ok(r.calls > 100, `only ${r.calls} translatable calls found`);
	assert.deepEqual(r.unmatched, [], 'calls whose argument is not a string literal cannot be translated');
	assert.equal(r.extracted, r.calls);
});

test('the template lists every string in use and nothing else', () => {
	assert.ok(fs.existsSync(POT), `${POT} is missing: ${REGEN}`);
	const inPot = parsePot(fs.readFileSync(POT, 'utf8'));
	const key = (e) => e.plural ? `${e.msgid} | ${e.plural}` : e.msgid;
	const have = new Set(inPot.map(key));
	const want = new Set(Array.from(extract().entries.values()).map(key));
	for (const k of want)
		assert.ok(have.has(k), `${POT} lacks "${k}": ${REGEN}`);
	for (const k of have)
		assert.ok(want.has(k), `${POT} has unused "${k}": ${REGEN}`);
	assert.equal(inPot.length, have.size, 'duplicate msgids in the template');
	assert.ok(have.has('Hardware offload is not possible on %s; flows are offloaded in software.'));
	assert.ok(have.has('Flow Offload'), 'menu titles are translatable too');
});

test('the template is exactly what the generator writes', () => {
	assert.equal(fs.readFileSync(POT, 'utf8'), render(), `${POT} is stale: ${REGEN}`);
});

test('plural forms carry the same placeholders', () => {
	for (const e of extract().entries.values()) {
		if (!e.plural)
			continue;
		const ph = (s) => (s.match(/%[sd]/g) || []).join('');
		assert.equal(ph(e.plural), ph(e.msgid), `"${e.msgid}" / "${e.plural}"`);
	}
});
