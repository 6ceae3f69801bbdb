'use strict';
// luci-app-fastpath in the real LuCI (openwrt-userland: ubusd, rpcd with its
// ACLs, uhttpd, luci-base's own JS, the bootstrap theme) with the real
// fastpath daemon behind ubus, driven in headless Chromium as each login.
// Run by inner.sh inside the runtime; every wait is for a condition, with a
// generous limit, so a loaded machine is slower but never fails a check.
//
// SCREENSHOTS=dir: also writes <view>-<login>.png there (the whole page);
// DOCS_SCREENSHOTS=dir: and the part of it luci-app/docs/ shows.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const puppeteer = require('puppeteer-core');

const URL = process.env.LUCI_URL || 'http://127.0.0.1:8080/cgi-bin/luci/';
const SHOTS = process.env.SCREENSHOTS || '';
const DOCS_SHOTS = process.env.DOCS_SCREENSHOTS || '';
const WAIT = 60000;

// Whether this kernel can hold a flowtable at all (this machine's cannot):
// what the daemon must report once software offload is requested.
const KERNEL_HAS_FLOWTABLES = (() => {
	try {
		execFileSync('nft', ['-f', '-'], { input: 'table inet fastpath_probe { flowtable f { hook ingress priority 0; devices = { lo }; } }\n', stdio: ['pipe', 'ignore', 'ignore'] });
		execFileSync('nft', ['delete', 'table', 'inet', 'fastpath_probe']);
		return true;
	} catch (e) {
		return false;
	}
})();

// Markup that would run if any text reached the page as HTML. Each sets
// window.__fpxss and carries an id the document must never contain.
const xss = (where) => `<img src=x id=fpxss-${where} onerror="window.__fpxss='${where}'">`;

// Console errors LuCI itself raises in this runtime (README "Time and
// quirks"): no DOCUMENT_ROOT for the preload listing, no favicon in its
// /www, and the overview's sources that the runtime lacks (netifd,
// luci-rpc, dhcp, board.json).
const EXPECTED_ERRORS = {
	all: [/file\/list|luci-static\/resources\/preload/, /status of 404 .*"url":"[^"]*\/favicon\.ico"/],
	// Save & Apply asks cgi-io, which the runtime lacks (404), for the peer's address.
	apply: [/cgi-bin\/cgi-exec/],
	overview: [/luci-rpc|network[./]|Object not found|board\.json|dhcp|getOdhcp6cStats|Resource not found|status 5|ubus code 5/]
};

const failures = [];
let checks = 0;

// uhttpd runs each request to LuCI's dispatcher (/cgi-bin/luci/) in a
// process forked from its parent, and the dispatcher opens its ubus
// connection once, in the parent (dispatcher.uc: `let ubus = connect()` at
// import), so concurrent requests share one socket. Two at once can hang
// until uhttpd's 60 s script timeout (two parallel curl requests of
// admin/menu in this runtime did so in 2 of 5 tries, three in 5 of 5). So the
// browser's requests to the dispatcher go one at a time, in the order the
// page makes them (/ubus calls and static files go at once), and a view
// is left only once its page has settled (Session.settle).
class DispatcherQueue {
	constructor() {
		this.waiting = [];
		this.active = null;
		this.log = []; // [ms, event, url]: $OUT/dispatcher.log, for reading a failure
		this.t0 = Date.now();
	}

	note(event, r) {
		this.log.push(`${((Date.now() - this.t0) / 1000).toFixed(1)}\t${event}\t${r.method()} ${r.url()}`);
	}

	// What is in flight, for a failure message.
	state() {
		return this.idle() ? 'no dispatcher request in flight' :
			`dispatcher request in flight: ${this.active ? this.active.url() : 'none'}; ${this.waiting.length} waiting`;
	}

	idle() {
		return !this.active && !this.waiting.length;
	}

	attach(page) {
		page.on('request', (r) => {
			// Pages, XHR and fetch: what LuCI asks the dispatcher for. (An image
			// there comes only from injected markup, and Chromium may drop it
			// with no event when its element goes.)
			if (!/^[a-z]+:\/\/[^/]+\/cgi-bin\/luci\b/.test(r.url()) || !['document', 'xhr', 'fetch'].includes(r.resourceType()))
				return r.continue().catch(() => {});
			this.waiting.push(r);
			this.next();
		});
		const done = (r) => {
			if (r === this.active || this.waiting.includes(r))
				this.note(r.failure() ? `failed ${r.failure().errorText}` : 'done', r);
			this.waiting = this.waiting.filter((w) => w !== r);
			if (r === this.active) {
				this.active = null;
				this.next();
			}
		};
		page.on('requestfinished', done);
		page.on('requestfailed', done);
		return page.setRequestInterception(true);
	}

	// A closed page's requests report nothing more: forget them.
	forget(page) {
		const of = (r) => r.frame()?.page() === page;
		this.waiting = this.waiting.filter((r) => !of(r));
		if (this.active && of(this.active)) {
			this.note('forgotten', this.active);
			this.active = null;
			this.next();
		}
	}

	next() {
		if (this.active || !this.waiting.length)
			return;
		const r = this.active = this.waiting.shift();
		this.note('go', r);
		// A request the page dropped before its turn: go on with the next.
		r.continue().catch(() => { if (this.active === r) { this.active = null; this.next(); } });
	}
}
const dispatcherQueue = new DispatcherQueue();

async function check(name, fn) {
	checks++;
	try {
		await fn();
		console.log(`ok   ${name}`);
	} catch (e) {
		failures.push(name);
		console.log(`FAIL ${name}\n     ${String(e && e.stack || e).split('\n').slice(0, 6).join('\n     ')}\n     (${dispatcherQueue.state()})`);
	}
}

function sh(cmd, args) {
	return execFileSync(cmd, args, { encoding: 'utf8' });
}

function ubus(method, args) {
	return JSON.parse(sh('ubus', ['call', 'fastpath', method, JSON.stringify(args || {})]) || '{}');
}

function counter(ns, name) {
	const j = JSON.parse(sh('ip', ['netns', 'exec', ns, 'nft', '-j', 'list', 'counter', 'ip', 'count', name]));
	return j.nftables.find((x) => x.counter).counter.packets;
}

// Waits until fn() returns a truthy value (checked every 200 ms).
async function until(what, fn, limit) {
	const end = Date.now() + (limit || WAIT);
	for (;;) {
		const v = await fn();
		if (v)
			return v;
		if (Date.now() > end)
			throw new Error(`gave up waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 200));
	}
}

class Session {
	constructor(browser, login) {
		this.browser = browser;
		this.login = login;
		this.errors = [];
	}

	async open() {
		this.ctx = await this.browser.createBrowserContext();
		this.page = await this.ctx.newPage();
		await this.page.setViewport({ width: 1280, height: 900 });
		this.page.setDefaultTimeout(WAIT);
		this.page.setDefaultNavigationTimeout(WAIT);
		await dispatcherQueue.attach(this.page);
		await this.page.goto(URL, { waitUntil: 'domcontentloaded' });
		await this.page.waitForSelector('input[name=luci_password]');
		// One step, so LuCI moving the form into its login dialog cannot lose typed text.
		await Promise.all([
			this.page.waitForNavigation({ waitUntil: 'domcontentloaded' }),
			this.page.evaluate((user) => {
				const pw = document.querySelector('input[name=luci_password]');
				pw.form.querySelector('input[name=luci_username]').value = user;
				pw.value = 'fastpath';
				pw.form.submit();
			}, this.login)
		]);
		const cookies = await this.ctx.cookies();
		if (process.env.OUT && !cookies.some((c) => /^sysauth/.test(c.name)))
			fs.writeFileSync(path.join(process.env.OUT, `login-${this.login}.html`), await this.page.content());
		assert.ok(cookies.some((c) => /^sysauth/.test(c.name) && c.value), `${this.login} could not log in`);
		// From here on every console error and page error counts.
		this.page.on('console', (m) => { if (m.type() == 'error') this.errors.push(`console: ${m.text()} ${JSON.stringify(m.location())}`); });
		this.page.on('pageerror', (e) => this.errors.push(`pageerror: ${e.message}`));
		return this;
	}

	// The page has loaded and makes no request to the dispatcher (twice in a row, 200 ms apart).
	async settle() {
		let quiet = 0;
		await until('the page to settle', async () => {
			const loaded = await this.page.evaluate(() => document.readyState == 'complete').catch(() => false);
			quiet = (loaded && dispatcherQueue.idle()) ? quiet + 1 : 0;
			return quiet >= 2;
		});
	}

	// Loads a view and waits for a selector that only its rendered content has.
	async view(route, ready) {
		await this.settle();
		this.errors = [];
		const res = await this.page.goto(URL + route, { waitUntil: 'domcontentloaded' });
		if (ready)
			await this.page.waitForSelector(ready);
		return res;
	}

	unexpectedErrors(kind) {
		const ok = EXPECTED_ERRORS.all.concat(EXPECTED_ERRORS[kind] || []);
		return this.errors.filter((e) => !ok.some((re) => re.test(e)));
	}

	async text(sel) {
		return this.page.$eval(sel || 'body', (e) => e.innerText.replace(/\s+/g, ' '));
	}

	// No injected markup became an element, and none of its handlers ran.
	async assertNoInjection() {
		const found = await this.page.evaluate(() => ({
			flag: window.__fpxss || null,
			ids: Array.from(document.querySelectorAll('[id^="fpxss-"]')).map((e) => e.id)
		}));
		assert.deepEqual(found, { flag: null, ids: [] }, 'injected markup was interpreted as HTML');
	}

	// Enabled buttons and inputs in the view that change something.
	async writeActions() {
		return this.page.evaluate(() => {
			// Not "Edit": LuCI's GridSection offers it to read-only logins too, and its dialog is read only.
			const writes = /^(Cut…|Cut|Release|Change mode…|Change mode|Re-apply now|Save & Apply|Save|Reset|Add|Delete|Clone)$/;
			return Array.from(document.querySelectorAll('#view button, #view input[type=button], #view input[type=submit], .cbi-page-actions button, #modal_overlay button'))
				.filter((b) => !b.disabled && writes.test((b.innerText || b.value || '').trim()))
				.map((b) => (b.innerText || b.value).trim());
		});
	}

	// The whole page to SCREENSHOTS; with DOCS_SCREENSHOTS, unless docs is
	// false, also the part a reader needs (the section titled `section`,
	// else the top of the page) at 3/4 size, small enough to keep in the
	// repository.
	async shoot(name, { section, docs } = {}) {
		if (!SHOTS)
			return;
		const file = `${name}-${this.login}.png`;
		await this.page.evaluate(() => window.scrollTo(0, 0));
		await this.page.screenshot({ path: path.join(SHOTS, file), fullPage: true });
		if (!DOCS_SHOTS || docs === false)
			return;
		const clip = await this.page.evaluate((title) => {
			const box = title && Array.from(document.querySelectorAll('.cbi-section')).find((e) => (e.querySelector('h3')?.innerText || '').trim().split('\n')[0] == title);
			const r = (box || document.body).getBoundingClientRect();
			return { x: r.left, y: r.top + window.scrollY, width: Math.min(r.width, 1280), height: Math.min(r.height, box ? r.height : 950) };
		}, section || null);
		await this.page.screenshot({ path: path.join(DOCS_SHOTS, file), clip: Object.assign(clip, { scale: 0.75 }), captureBeyondViewport: true });
	}

	async notification(re) {
		return until(`a notification matching ${re}`, () => this.page.evaluate((src) => {
			const r = new RegExp(src);
			return Array.from(document.querySelectorAll('.alert-message')).map((n) => n.innerText.replace(/\s+/g, ' ')).find((t) => r.test(t)) || null;
		}, re.source));
	}

	// Closed once settled: a dispatcher request cut off by the close would run on beside the next one.
	async close() {
		await this.settle();
		await this.ctx.close();
		dispatcherQueue.forget(this.page);
	}
}

// The row of the flows table whose text has all of the given parts.
async function flowRow(page, parts) {
	return until(`a flow row with ${parts.join(' ')}`, async () => {
		const rows = await page.$$('#fastpath-flows tr[data-flow]');
		for (const r of rows) {
			const t = await r.evaluate((e) => e.innerText);
			if (parts.every((p) => t.includes(p)))
				return r;
		}
		return null;
	});
}

async function cutRow(page, parts) {
	const rows = await page.$$('#fastpath-cuts tr.cbi-section-table-row');
	for (const r of rows) {
		const t = await r.evaluate((e) => e.innerText);
		if (parts.every((p) => t.includes(p)))
			return r;
	}
	return null;
}

async function buttonIn(row, label) {
	for (const b of await row.$$('button'))
		if ((await b.evaluate((e) => e.innerText.trim())) == label)
			return b;
	return null;
}

async function main() {
	for (const dir of [SHOTS, DOCS_SHOTS].filter(Boolean))
		fs.mkdirSync(dir, { recursive: true });

	await until('the block-list cut of 10.0.2.3', () => ubus('cuts').cuts?.some((c) => c.original?.dst == '10.0.2.3'));
	// A cut whose reason is markup, made over ubus as an inspector would, on
	// a flow that keeps sending (a cut without frames expires after cut_expiry).
	ubus('cut', { proto: 'udp', src: '10.0.1.2', sport: 40009, dst: '10.0.2.2', dport: 9, reason: xss('ubusreason') });
	await until('the ubus cut to drop frames', () => ubus('cuts').cuts?.some((c) => c.original?.sport == 40009 && c.frames > 0));

	const browser = await puppeteer.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		userDataDir: fs.mkdtempSync('/tmp/fastpath-chromium-'),
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync', '--headless', '--lang=en-US']
	});

	try {
		// LOGINS=readonly,noapp runs only those logins' checks (when reading a failure).
		const logins = (process.env.LOGINS || 'root,readonly,noapp').split(',');
		for (const [login, run] of [['root', asRoot], ['readonly', asReadonly], ['noapp', asNoapp]])
			if (logins.includes(login))
				await run(browser);
	} finally {
		await browser.close();
		// What the daemon answered at the end and the dispatcher requests, for reading a failure.
		if (process.env.OUT)
			fs.writeFileSync(path.join(process.env.OUT, 'dispatcher.log'), dispatcherQueue.log.join('\n') + '\n');
		if (process.env.OUT)
			fs.writeFileSync(path.join(process.env.OUT, 'answers.json'), JSON.stringify({
				status: ubus('status'), flows: ubus('flows', { limit: 50 }), cuts: ubus('cuts')
			}, null, '\t'));
	}

	console.log(`\n${checks - failures.length} of ${checks} checks passed`);
	if (failures.length) {
		console.log(`failed:\n  ${failures.join('\n  ')}`);
		process.exit(1);
	}
}

async function asRoot(browser) {
	const s = await new Session(browser, 'root').open();
	const page = s.page;

	await check('root: the mode selector offers the daemon\'s modes and keeps a choice across refreshes; Change mode reaches the daemon', async () => {
		await s.view('admin/network/fastpath/status', '#fastpath-mode');
		const caps = ubus('capabilities'), requested = ubus('status').mode.requested;
		assert.equal(requested, 'off', 'the test starts with offloading off');
		const offered = await page.$$eval('#fastpath-mode option', (l) => l.map((o) => o.value));
		// The modes the daemon can run, Automatic (it picks), and the one requested.
		assert.deepEqual(offered, ['off', 'software', 'hardware', 'auto'].filter((m) => caps.modes.includes(m) || m == 'auto' || m == requested));
		assert.equal(caps.platform.hw_offload_capable, false, 'an x86 namespace has no offload engine');
		assert.ok(!offered.includes('hardware'), 'hardware is offered where the chipset cannot offload');
		await page.select('#fastpath-mode', 'software');
		// The page refreshes every 5 s; the choice must survive it.
		await page.evaluate(() => { window.__fpBody = document.querySelector('#fastpath-status').firstElementChild; });
		await page.waitForFunction(() => document.querySelector('#fastpath-status').firstElementChild !== window.__fpBody);
		assert.equal(await page.$eval('#fastpath-mode', (e) => e.value), 'software', 'a refresh reset the mode chosen in the selector');
		await page.click('#fastpath-mode-change');
		await page.waitForSelector('#fastpath-mode-confirm', { visible: true });
		await page.click('#fastpath-mode-confirm');
		await s.notification(/Offload mode set to Software offload/);
		assert.equal(ubus('status').mode.requested, 'software');
		assert.equal(sh('uci', ['get', 'firewall.@defaults[0].flow_offloading']).trim(), '1');
		assert.deepEqual(s.unexpectedErrors(), []);
	});

	await check('root: Status renders the daemon\'s answer, its errors and kernel notes as text', async () => {
		// The state the check before leaves, made here too so this check stands alone.
		if (ubus('status').mode.requested != 'software')
			ubus('set', { mode: 'software' });
		await s.view('admin/network/fastpath/status', '#fastpath-status .cbi-section');
		const st = ubus('status');
		const text = await s.text('#view');
		assert.ok(!text.includes('[object'), `a nested list shows as "[object ...]": ${text.slice(0, 400)}`);
		assert.ok(text.includes('Offload mode') && text.includes('Kernel flowtable') && text.includes('Cuts'), text.slice(0, 300));
		const notices = await page.$$eval('#fastpath-status .alert-message.notice', (l) => l.map((n) => n.innerText.trim()));
		assert.deepEqual(notices, st.kernel.missing || [], 'every kernel feature the daemon says is missing is a notice');
		const warnings = await page.$$eval('#fastpath-status .alert-message.warning', (l) => l.map((n) => n.innerText.trim()));
		for (const e of (st.errors || []).concat(st.cut.warnings || []))
			assert.ok(warnings.includes(e), `the daemon's "${e}" is not shown as a warning: ${JSON.stringify(warnings)}`);
		// Software offload is requested now. Without a kernel config or module
		// tree to read (as here) the daemon assumes flowtables until an apply
		// tries one; on a kernel without them it must then say so.
		assert.equal(st.mode.requested, 'software');
		if (!KERNEL_HAS_FLOWTABLES) {
			assert.equal(st.kernel.flowtable, false, 'the kernel refused a flowtable but the daemon reports flowtable support');
			assert.ok(notices.some((n) => /flowtable/.test(n)), `no notice names the missing flowtable support: ${JSON.stringify(notices)}`);
			assert.ok(warnings.length > 0, 'the failed apply is not shown as a warning');
		}
		assert.deepEqual(s.unexpectedErrors(), []);
		await s.shoot('status');
	});

	await check('root: a block-list line and a block-list name with markup read as text on Status', async () => {
		const text = await s.text('#view');
		assert.ok(text.includes('id=fpxss-listline'), 'the bad block-list line is not shown');
		assert.ok(text.includes('id=fpxss-listname'), 'the block list name is not shown');
		await s.assertNoInjection();
	});

	await check('root: Flows lists the test flow and marks the router\'s own connections', async () => {
		await s.view('admin/network/fastpath/flows', '#fastpath-flows tr[data-flow]');
		const local = await flowRow(page, ['10.0.1.2:40002', '10.0.1.1:5353']);
		assert.ok((await local.evaluate((e) => e.innerText)).includes('to or from the router itself'));
		assert.equal(await buttonIn(local, 'Cut…'), null, 'a connection to the router itself is offered Cut by default');
		await page.click('#fastpath-cut-local');
		assert.ok(await buttonIn(await flowRow(page, ['10.0.1.2:40002', '10.0.1.1:5353']), 'Cut…'), 'ticking the box offers Cut');
		await page.click('#fastpath-cut-local');
		const fwd = await flowRow(page, ['10.0.1.2:40000', '10.0.2.2:5201']);
		assert.ok(!(await fwd.evaluate((e) => e.innerText)).includes('router itself'));
		assert.ok(await buttonIn(fwd, 'Cut…'), 'a forwarded flow has its Cut button');
		// One row: no field starts below the bottom of the first (they are centred, so tops differ).
		const filters = await page.$eval('#fastpath-filters', (e) => {
			const boxes = Array.from(e.querySelectorAll('label')).map((l) => l.getBoundingClientRect());
			const h = Array.from(e.querySelectorAll('input[type=text], input[type=number], select')).map((i) => Math.round(i.getBoundingClientRect().height));
			return { wrapped: boxes.filter((b) => b.top >= boxes[0].bottom).length, fields: boxes.length, heights: Array.from(new Set(h)) };
		});
		assert.ok(filters.fields >= 5, `the filter bar has ${filters.fields} fields`);
		assert.equal(filters.wrapped, 0, 'the filter bar wraps at 1280 px');
		assert.equal(filters.heights.length, 1, `filter fields differ in height: ${filters.heights}`);
		assert.deepEqual(s.unexpectedErrors(), []);
		await s.shoot('flows');
	});

	await check('root: Why? on a slow-path flow shows where it is and a reason in a dialog', async () => {
		const row = await flowRow(page, ['10.0.1.2:40000', '10.0.2.2:5201']);
		await (await buttonIn(row, 'Why?')).click();
		await page.waitForSelector('#modal_overlay .modal .fastpath-why li', { visible: true });
		const text = await s.text('#modal_overlay .modal');
		assert.ok(text.includes('Why is this flow not offloaded?'), text);
		assert.ok(/Where: slow path/.test(text), text);
		assert.ok(/(Blocks|Maybe): \S/.test(text) && text.includes('Evidence: '), text);
		await s.assertNoInjection();
		assert.deepEqual(s.unexpectedErrors(), []);
		await s.shoot('why-dialog');
		await (await buttonIn(await page.$('#modal_overlay .modal'), 'Close')).click();
		await page.waitForFunction(() => !document.body.classList.contains('modal-overlay-active'));
	});

	await check('root: cut reasons, block-list triggers and a refused filter read as text on Flows', async () => {
		await until('the ubus cut with its reason in the Active cuts table', () => cutRow(page, ['10.0.1.2:40009', 'id=fpxss-ubusreason']));
		assert.ok(await cutRow(page, ['10.0.2.3:5300', 'id=fpxss-listname']), 'the block list trigger is not shown');
		const addr = await page.$('#fastpath-filters input[placeholder="192.168.1.23"]');
		await addr.type(xss('filter'));
		await addr.evaluate((e) => e.dispatchEvent(new Event('change')));
		await until('the refused filter', async () => (await s.text('#fastpath-flows')).includes('The daemon refused the filter'));
		assert.ok((await s.text('#fastpath-flows')).includes('id=fpxss-filter'));
		await s.assertNoInjection();
		await addr.evaluate((e) => { e.value = ''; e.dispatchEvent(new Event('change')); });
		await flowRow(page, ['10.0.1.2:40000', '10.0.2.2:5201']);
	});

	await check('root: Cut → confirm stops the frames; the typed reason reads as text; Release lets them through again', async () => {
		const row = await flowRow(page, ['10.0.1.2:40000', '10.0.2.2:5201']);
		await (await buttonIn(row, 'Cut…')).click();
		await page.waitForSelector('#fastpath-cut-reason', { visible: true });
		await s.shoot('cut-dialog');
		await page.type('#fastpath-cut-reason', xss('reason'));
		await page.click('#fastpath-cut-confirm');
		await s.notification(/Cut 10\.0\.1\.2:40000/);
		const isCut = (c) => c.original?.src == '10.0.1.2' && c.original?.sport == 40000;
		await until('the cut to drop frames', () => ubus('cuts').cuts?.some((c) => isCut(c) && c.frames > 0));
		const rx0 = counter('wanhost', 'rx'), tx0 = counter('lanhost', 'tx');
		await until('50 more frames sent', () => counter('lanhost', 'tx') >= tx0 + 50);
		assert.equal(counter('wanhost', 'rx'), rx0, 'frames of the cut flow still reach the far host');
		await until('the cut in the Active cuts table', () => cutRow(page, ['10.0.1.2:40000', 'id=fpxss-reason']));
		await s.assertNoInjection();
		await s.shoot('flows-cut', { docs: false });

		const cut = await cutRow(page, ['10.0.1.2:40000']);
		await (await buttonIn(cut, 'Release')).click();
		await s.notification(/Released 10\.0\.1\.2:40000/);
		await until('frames through again after Release', () => counter('wanhost', 'rx') > rx0);
		assert.deepEqual(s.unexpectedErrors(), []);
	});

	await check('root: Settings edits the daemon\'s section; Save & Apply reaches the daemon', async () => {
		await s.view('admin/network/fastpath/settings', '.cbi-map');
		const sel = '[id="widget.cbid.fastpath.main.cut_expiry"]';
		await page.waitForSelector(sel);
		await page.$eval(sel, (e) => { e.value = ''; });
		await page.type(sel, '25');
		await s.shoot('settings');
		await page.click('.cbi-page-actions .cbi-button-apply');
		await s.notification(/Configuration changes applied/);
		assert.equal(sh('uci', ['get', 'fastpath.main.cut_expiry']).trim(), '25');
		// No procd here: what the init script's reload trigger would do.
		ubus('reload');
		assert.equal(ubus('cuts').expiry_s, 25);
		assert.deepEqual(s.unexpectedErrors('apply'), []);
		const hw = await page.$$eval('[id="widget.cbid.fastpath.main.hw_offload"] option', (l) => l.map((o) => o.textContent));
		assert.deepEqual(hw, ['Follow the firewall', 'Automatic', 'Never']);
	});

	await check('root: Status › Overview shows the one line', async () => {
		await s.view('admin/status/overview');
		await until('the Flow offload line', async () => /Flow offload/.test(await s.text('#view')) && /flows offloaded/.test(await s.text('#view')));
		assert.deepEqual(s.unexpectedErrors('overview'), []);
		await s.assertNoInjection();
		await s.shoot('overview', { section: 'Flow offload' });
	});

	await s.close();
}

async function asReadonly(browser) {
	const s = await new Session(browser, 'readonly').open();
	const page = s.page;

	await check('readonly: Status renders, offers no write action', async () => {
		await s.view('admin/network/fastpath/status', '#fastpath-status .cbi-section');
		assert.ok(!(await s.text('#view')).includes('[object'));
		assert.equal(await page.$('#fastpath-mode-change'), null);
		assert.equal(await page.$('#fastpath-reload'), null);
		assert.deepEqual(await s.writeActions(), []);
		await s.assertNoInjection();
		assert.deepEqual(s.unexpectedErrors(), []);
		await s.shoot('status');
	});

	await check('readonly: Flows renders, no Cut and no Release', async () => {
		await s.view('admin/network/fastpath/flows', '#fastpath-flows tr[data-flow]');
		await until('the cuts table', async () => (await s.text('#fastpath-cuts')).includes('10.0.2.3'));
		assert.deepEqual(await s.writeActions(), []);
		assert.equal(await page.$('#fastpath-cut-local'), null);
		await s.assertNoInjection();
		assert.deepEqual(s.unexpectedErrors(), []);
		await s.shoot('flows');
	});

	await check('readonly: Settings renders read only', async () => {
		await s.view('admin/network/fastpath/settings', '.cbi-map');
		await page.waitForSelector('[id="widget.cbid.fastpath.main.cut_expiry"]');
		assert.deepEqual(await s.writeActions(), []);
		assert.equal(await page.$eval('[id="widget.cbid.fastpath.main.cut_expiry"]', (e) => e.disabled || e.readOnly), true);
		await s.assertNoInjection();
		await s.shoot('settings');
		// A block list's Edit opens its options read only, as LuCI's forms do for such logins.
		await page.click('.cbi-section-table-row .cbi-button-edit');
		await page.waitForSelector('#modal_overlay .modal .cbi-map', { visible: true });
		assert.deepEqual(await s.writeActions(), [], 'the block-list dialog offers a write action');
		const editable = await page.$$eval('#modal_overlay .modal input, #modal_overlay .modal select', (l) =>
			l.filter((e) => !e.disabled && !e.readOnly && e.type != 'hidden').map((e) => e.id || e.name));
		assert.deepEqual(editable, [], 'the block-list dialog has editable fields');
		assert.deepEqual(s.unexpectedErrors(), []);
	});

	await check('readonly: a refused write call shows a notification', async () => {
		await s.view('admin/network/fastpath/status', '#fastpath-status .cbi-section');
		// The call a stale page or a crafted click would make: rpcd refuses it (-32002).
		const before = ubus('status').mode.requested, target = (before == 'off') ? 'software' : 'off';
		const msg = await page.evaluate((mode) => new Promise((resolve) => {
			L.require('view.fastpath.status').then((v) => v.applyMode(mode)).then(() => resolve('done'), (e) => resolve(String(e)));
		}), target);
		assert.equal(msg, 'done', 'the refusal escaped as an uncaught error');
		await s.notification(/The mode was not changed: access denied/);
		assert.equal(ubus('status').mode.requested, before, 'a read-only login changed the mode');
	});

	await s.close();
}

async function asNoapp(browser) {
	const s = await new Session(browser, 'noapp').open();

	await check('noapp: no Flow Offload menu, the app\'s pages refused, the overview line says access denied', async () => {
		const res = await s.view('admin/network/fastpath/status');
		assert.equal(res.status(), 403);
		await s.view('admin/status/overview');
		await until('the Flow offload box', async () => /Flow offload/.test(await s.text('#view')));
		const text = await until('the overview line', async () => {
			const t = await s.text('#view');
			return /Access denied|does not answer/.test(t) ? t : null;
		});
		assert.ok(text.includes('Access denied: this login may not read fastpath\'s status.'), text);
		assert.equal(await s.page.$('a[href$="admin/network/fastpath"]'), null, 'the menu shows Flow Offload');
		assert.deepEqual(s.unexpectedErrors('overview'), []);
		await s.shoot('overview', { section: 'Flow offload' });
	});

	await s.close();
}

main().catch((e) => {
	console.log(`FAIL ${e && e.stack || e}`);
	process.exit(1);
});
