'use strict';
// Builds po/templates/fastpath.pot from the translatable strings: _('...')
// and N_(n, '...', '...') in the class files, and the menu titles, which
// LuCI translates too. Run `node luci-app/tests/lib/pot.js` to rewrite the
// template after changing a string; the tests fail while it is stale.

const fs = require('node:fs');
const path = require('node:path');
const { jsFiles } = require('./files');

const APP = path.resolve(__dirname, '..', '..');
const HTDOCS = path.join(APP, 'htdocs');
const MENU = path.join(APP, 'root', 'usr', 'share', 'luci', 'menu.d', 'luci-app-fastpath.json');
const POT = path.join(APP, 'po', 'templates', 'fastpath.pot');

const LIT = String.raw`('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")`;
const SINGULAR = new RegExp(String.raw`(?<![\w$.])_\(\s*` + LIT + String.raw`\s*\)`, 'g');
const PLURAL = new RegExp(String.raw`(?<![\w$.])N_\(\s*[^,()]+(?:\([^()]*\))?\s*,\s*` + LIT + String.raw`\s*,\s*` + LIT + String.raw`\s*\)`, 'g');
const ANY_CALL = /(?<![\w$.])N?_\(/g;

// A JS string literal's value (the sources are ours, written for LuCI).
function unquote(lit) {
	return Function(`'use strict'; return (${lit});`)();
}

// Blanks comments so commented-out calls neither count nor get extracted.
function stripComments(src) {
	return src.replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' '))
		.replace(/(^|[^:'"\\])\/\/[^\n]*/g, (m, p) => p + ' '.repeat(m.length - p.length));
}

function lineOf(src, index) {
	return src.slice(0, index).split('\n').length;
}

// Returns { entries: Map(key -> {msgid, plural, refs[]}), calls, extracted }.
function extract() {
	const entries = new Map();
	let calls = 0, extracted = 0;
	const add = (msgid, plural, ref) => {
		const key = plural ? `${msgid}\u0000${plural}` : msgid;
		if (!entries.has(key))
			entries.set(key, { msgid, plural, refs: [] });
		entries.get(key).refs.push(ref);
	};
	const unmatched = [];
	for (const f of jsFiles(HTDOCS)) {
		const src = stripComments(fs.readFileSync(f, 'utf8'));
		const rel = path.relative(APP, f).split(path.sep).join('/');
		const found = new Set();
		let m;
		SINGULAR.lastIndex = 0;
		while ((m = SINGULAR.exec(src))) {
			add(unquote(m[1]), null, `${rel}:${lineOf(src, m.index)}`);
			found.add(m.index);
		}
		PLURAL.lastIndex = 0;
		while ((m = PLURAL.exec(src))) {
			add(unquote(m[1]), unquote(m[2]), `${rel}:${lineOf(src, m.index)}`);
			found.add(m.index);
		}
		ANY_CALL.lastIndex = 0;
		while ((m = ANY_CALL.exec(src))) {
			calls++;
			if (!found.has(m.index))
				unmatched.push(`${rel}:${lineOf(src, m.index)}`);
		}
		extracted += found.size;
	}
	const menu = JSON.parse(fs.readFileSync(MENU, 'utf8'));
	for (const k of Object.keys(menu))
		add(menu[k].title, null, 'root/usr/share/luci/menu.d/luci-app-fastpath.json');
	return { entries, calls, extracted, unmatched };
}

function quote(s) {
	return '"' + s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t') + '"';
}

function render() {
	const { entries } = extract();
	const list = Array.from(entries.values()).sort((a, b) => (a.msgid < b.msgid ? -1 : a.msgid > b.msgid ? 1 : (a.plural || '') < (b.plural || '') ? -1 : 1));
	let out = 'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n';
	for (const e of list) {
		out += '\n';
		for (const r of Array.from(new Set(e.refs)))
			out += `#: ${r}\n`;
		out += `msgid ${quote(e.msgid)}\n`;
		if (e.plural)
			out += `msgid_plural ${quote(e.plural)}\nmsgstr[0] ""\nmsgstr[1] ""\n`;
		else
			out += 'msgstr ""\n';
	}
	return out;
}

// The msgids of a .pot/.po file: [{ msgid, plural }].
function parsePot(text) {
	const out = [];
	let cur = null, field = null;
	const unq = (s) => JSON.parse(s);
	for (const line of text.split('\n')) {
		let m;
		if ((m = /^msgid (".*")$/.exec(line))) {
			cur = { msgid: unq(m[1]), plural: null };
			out.push(cur);
			field = 'msgid';
		} else if ((m = /^msgid_plural (".*")$/.exec(line))) {
			cur.plural = unq(m[1]);
			field = 'plural';
		} else if ((m = /^(".*")$/.exec(line)) && cur && field) {
			cur[field] += unq(m[1]);
		} else {
			field = null;
		}
	}
	return out.filter((e) => e.msgid !== '');
}

module.exports = { POT, extract, render, parsePot };

if (require.main === module) {
	fs.mkdirSync(path.dirname(POT), { recursive: true });
	fs.writeFileSync(POT, render());
	process.stdout.write(`wrote ${POT}\n`);
}
