'use strict';
// The app's JavaScript files below a directory, sorted: what LuCI serves,
// for the tests and the .pot builder that read every class file.

const fs = require('node:fs');
const path = require('node:path');

function jsFiles(dir) {
	const out = [];
	(function walk(d) {
		for (const e of fs.readdirSync(d, { withFileTypes: true })) {
			const p = path.join(d, e.name);
			if (e.isDirectory()) walk(p);
			else if (e.name.endsWith('.js')) out.push(p);
		}
	})(dir);
	return out.sort();
}

module.exports = { jsFiles };
