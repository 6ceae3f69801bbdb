'use strict';
// Screenshots of every view in headless Chromium, drawn by runtime.js with
// the daemon's recorded answers (tests/recorded/) when all are there, else
// the hand-made fixtures (tests/fixtures/). Writes luci-app/docs/*.png.
//
//   node luci-app/docs/harness/shoot.js [chromium binary]

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const APP = path.resolve(__dirname, '..', '..');
const RES = path.join(APP, 'htdocs', 'luci-static', 'resources');
const OUT = path.join(APP, 'docs');
const chromium = process.argv[2] || 'chromium';

const recordedDir = path.join(APP, 'tests', 'recorded');
const names = ['status', 'flows', 'cuts', 'capabilities'];
const haveRecorded = names.every((n) => fs.existsSync(path.join(recordedDir, n + '.json')));
const dataDir = haveRecorded ? recordedDir : path.join(APP, 'tests', 'fixtures');
const answer = (f) => JSON.parse(fs.readFileSync(path.join(dataDir, f), 'utf8'));

// /etc/config/fastpath as in the config contract, and the firewall's switches.
const uci = {
	fastpath: {
		main: { '.type': 'fastpath', enabled: '1', hw_offload: 'follow', cut_in_fastpath: '1', cut_expiry: '10', cut_set_size: '65536', log_level: 'info' },
		cfg02: { '.type': 'blocklist', name: 'banip', type: 'nftset', family: 'inet', table: 'banIP', set: 'blocklistv4' },
		cfg03: { '.type': 'blocklist', name: 'local', type: 'file', path: '/etc/fastpath/blocklist.txt' },
		cfg04: { '.type': 'blocklist', name: 'manual', type: 'list', address: ['198.51.100.7', '2001:db8:bad::/48'] }
	},
	firewall: { cfg01: { '.type': 'defaults', flow_offloading: '1', flow_offloading_hw: '1' } }
};

function sources() {
	const out = {};
	(function walk(d) {
		for (const e of fs.readdirSync(d, { withFileTypes: true })) {
			const p = path.join(d, e.name);
			if (e.isDirectory()) walk(p);
			else if (e.name.endsWith('.js'))
				out[path.relative(RES, p).replace(/\.js$/, '').split(path.sep).join('.')] = fs.readFileSync(p, 'utf8');
		}
	})(RES);
	return out;
}

const shots = [
	{ png: 'status.png', view: 'view.fastpath.status', tab: 'Status', height: 2150, answers: { status: answer('status.json'), capabilities: answer('capabilities.json') } },
	{ png: 'flows.png', view: 'view.fastpath.flows', tab: 'Flows', height: 900, answers: { flows: answer('flows.json'), cuts: answer('cuts.json') } },
	{
		png: 'flows-cut.png', view: 'view.fastpath.flows', tab: 'Flows', height: 900, answers: { flows: answer('flows.json'), cuts: answer('cuts.json') },
		after: `function(main) {
			main.querySelector('button.cbi-button-negative').click();
			document.getElementById('fastpath-cut-reason').value = 'unknown peer flooding the uplink';
		}`
	},
	{ png: 'settings.png', view: 'view.fastpath.settings', tab: 'Settings', height: 1350, answers: {} },
	{ png: 'overview.png', view: 'view.status.include.70_fastpath', tab: null, height: 260, answers: { status: answer('status.json') } }
];

if (!haveRecorded)
	shots.push({ png: 'status-no-flowtable.png', view: 'view.fastpath.status', tab: 'Status', height: 1500, answers: { status: answer('status-no-flowtable.json') } });

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fastpath-shots-'));
const css = fs.readFileSync(path.join(__dirname, 'page.css'), 'utf8');
const runtime = fs.readFileSync(path.join(__dirname, 'runtime.js'), 'utf8');
const js = (v) => JSON.stringify(v).replace(/</g, '\\u003c');

for (const s of shots) {
	const tabs = s.tab ? `<div class="tabs">${['Status', 'Flows', 'Settings'].map((t) => `<span class="${t == s.tab ? 'active' : ''}">${t}</span>`).join('')}</div>` : '<div class="tabs"><span class="active">Overview</span></div>';
	const html = `<!DOCTYPE html><html><head><meta charset="utf-8"><style>${css}</style></head><body>
<header><span class="brand">OpenWrt</span><nav><span class="${s.tab ? '' : 'active'}">Status</span><span>System</span><span class="${s.tab ? 'active' : ''}">Network</span><span>Logout</span></nav></header>
${tabs}<div id="maincontent"></div>
<script>window.FASTPATH_ANSWERS = ${js(s.answers)}; window.FASTPATH_UCI = ${js(uci)}; window.FASTPATH_SOURCES = ${js(sources())};</script>
<script>${runtime}</script>
<script>renderView(${js(s.view)}${s.after ? ', ' + s.after : ''});</script>
</body></html>`;
	const file = path.join(tmp, s.png.replace(/\.png$/, '.html'));
	fs.writeFileSync(file, html);
	execFileSync(chromium, [
		'--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
		'--disable-sync', '--no-first-run', `--user-data-dir=${path.join(tmp, 'profile')}`, '--hide-scrollbars',
		`--window-size=1280,${s.height}`, '--virtual-time-budget=3000', `--screenshot=${path.join(OUT, s.png)}`, 'file://' + file
	], { stdio: ['ignore', 'ignore', 'pipe'] });
	process.stdout.write(`${s.png}: ${s.view} with ${haveRecorded ? 'recorded' : 'hand-made'} answers\n`);
}
fs.rmSync(tmp, { recursive: true, force: true });
