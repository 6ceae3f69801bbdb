'use strict';
// Where the tests find ubus answers: recorded/ holds what the real daemon
// answered (written by the recorder test, never by hand); fixtures/ holds
// hand-made answers with exact expected sentences.

const fs = require('node:fs');
const path = require('node:path');

const RECORDED = path.resolve(__dirname, '..', 'recorded');
const FIXTURES = path.resolve(__dirname, '..', 'fixtures');

// The recorded answer of one method; a missing file fails with its name.
function recorded(file) {
	const f = path.join(RECORDED, file);
	if (!fs.existsSync(f))
		throw new Error(`missing recorded ubus answer ${f}: run the recorder test that calls the real fastpath daemon's ubus object and writes luci-app/tests/recorded/${file}`);
	return JSON.parse(fs.readFileSync(f, 'utf8'));
}

function fixture(file) {
	return JSON.parse(fs.readFileSync(path.join(FIXTURES, file), 'utf8'));
}

module.exports = { RECORDED, FIXTURES, recorded, fixture };
