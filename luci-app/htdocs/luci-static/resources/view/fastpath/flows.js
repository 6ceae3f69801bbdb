'use strict';
'require view';
'require dom';
'require poll';
'require rpc';
'require ui';
'require fastpath.format as fmt';
'require fastpath.page as page';

/*
 * Network > Flow Offload > Flows: conntrack's flows with their offload
 * flags, sortable and filterable, a Why? button per flow not offloaded,
 * a Cut button per flow, and the active cuts with Release buttons.
 */

var callFlows = rpc.declare({
	object: 'fastpath',
	method: 'flows',
	params: [ 'offload', 'proto', 'address', 'limit' ],
	expect: { '': {} }
});

var callCuts = rpc.declare({
	object: 'fastpath',
	method: 'cuts',
	expect: { '': {} }
});

/* Write calls and `why` keep the raw answer: {"error": ...} or a ubus status code. */
var callWhy = rpc.declare({
	object: 'fastpath',
	method: 'why',
	params: [ 'address', 'proto', 'src', 'dst', 'sport', 'dport', 'limit' ]
});

var callCut = rpc.declare({
	object: 'fastpath',
	method: 'cut',
	params: [ 'proto', 'src', 'dst', 'sport', 'dport', 'reason' ]
});

var callUncut = rpc.declare({
	object: 'fastpath',
	method: 'uncut',
	params: [ 'proto', 'src', 'dst', 'sport', 'dport' ]
});

/* Sortable columns: [ key, title ]; the rest are not sortable. */
var columns = [
	[ 'proto', _('Protocol') ],
	[ 'src', _('Source') ],
	[ 'dst', _('Destination') ],
	[ 'offload', _('Offloaded') ],
	[ 'bytes', _('Counters') ],
	[ 'rate', _('Rate') ],
	[ 'timeout', _('Timeout') ]
];

var DEFAULT_LIMIT = 500;

/* Every text goes in as [ text ] (see fastpath.page): flow, cut and reason text is never markup. */
var td = page.cell;

return view.extend({
	sortKey: 'bytes',
	sortDesc: true,

	/* Filters sent to the daemon's `flows` method. */
	query: function() {
		var q = this.queryState || {};

		return [ q.offload || undefined, q.proto || undefined, q.address || undefined, +q.limit || DEFAULT_LIMIT ];
	},

	fetch: function() {
		return Promise.all([
			callFlows.apply(null, this.query()).catch(fmt.callFailure),
			callCuts().catch(fmt.callFailure)
		]);
	},

	load: function() {
		this.queryState = { offload: '', proto: '', address: '', limit: DEFAULT_LIMIT };
		this.textFilter = '';
		this.cutLocal = false;
		return this.fetch();
	},

	/* Takes a fresh answer; keeps the previous one to compute rates. */
	update: function(data, nowMs) {
		var answer = fmt.shapeFlows(data[0]), flows = answer.flows;

		if (this.flows && this.fetchedAt)
			this.rates = fmt.flowRates(this.flows, flows, (nowMs - this.fetchedAt) / 1000);
		else
			this.rates = {};

		this.flows = flows;
		this.total = Math.max(answer.total, flows.length);
		this.truncated = answer.truncated;
		this.queryError = (data[0] && data[0].denied != null) ? data[0].message : fmt.callError(data[0]);
		this.cuts = fmt.shapeCuts(data[1]);
		this.fetchedAt = nowMs;
	},

	visibleFlows: function() {
		var shown = fmt.filterFlows(this.flows, {
			text: this.textFilter,
			offload: this.queryState.offload,
			proto: this.queryState.proto
		});

		return fmt.sortFlows(shown, this.sortKey, this.sortDesc, this.rates);
	},

	handleSort: function(key) {
		if (this.sortKey == key)
			this.sortDesc = !this.sortDesc;
		else {
			this.sortKey = key;
			this.sortDesc = (key == 'bytes' || key == 'rate' || key == 'offload');
		}

		this.redraw();
	},

	/* The Cut button of a row: only where the session may write, and the router's own connections only when asked. */
	cutButton: function(f) {
		if (!page.writable() || !fmt.cuttable(f))
			return '';

		if (f.local && !this.cutLocal)
			return E('small', { 'title': _('Cutting it could lock you out; tick "Offer Cut for the router\'s own connections" to cut it anyway.') },
				[ _('router\'s own') ]);

		return E('button', {
			'class': 'cbi-button cbi-button-negative',
			'title': _('Drop this connection in the fast path'),
			'click': ui.createHandlerFn(this, 'handleCut', f)
		}, [ _('Cut…') ]);
	},

	/* The Why? button of a row: flows not offloaded, for every login that may read. */
	whyButton: function(f) {
		if (f.offload == 'software' || f.offload == 'hardware')
			return '';

		return E('button', {
			'class': 'cbi-button cbi-button-neutral',
			'title': _('Ask the daemon why this flow is not offloaded'),
			'click': ui.createHandlerFn(this, 'handleWhy', f)
		}, [ _('Why?') ]);
	},

	/* One connection of a `why` answer: where it is, then its reasons in the kernel's order. */
	renderWhyAnswer: function(a) {
		var fl = a.flow || {}, reasons = fmt.list(a.reasons);

		return E('div', { 'class': 'fastpath-why' }, [
			E('p', {}, [ E('strong', {}, [ String(fl.proto || '?').toUpperCase() + ' ' + fmt.tuple(fl.original) ]),
				fl.state ? ' ' + String(fl.state) : '' ]),
			E('p', {}, [ _('Where: %s').format(fmt.whereLabel(a.where)) ]),
			(a.summary && !reasons.length) ? E('p', {}, [ String(a.summary) ]) : '',
			reasons.length ? E('ol', {}, reasons.map(function(r) {
				r = r || {};
				return E('li', {}, [
					E('strong', {}, [ r.blocks ? _('Blocks:') : _('Maybe:') ]), ' ', String(r.text || ''),
					r.evidence ? E('br') : '', r.evidence ? E('small', {}, [ _('Evidence: %s').format(r.evidence) ]) : '',
					r.fix ? E('br') : '', r.fix ? E('small', {}, [ _('Fix: %s').format(r.fix) ]) : ''
				]);
			})) : E('p', {}, [ E('em', {}, [ _('No reason given.') ]) ])
		]);
	},

	/* The body of the Why? dialog for an answer of `why` (or its failure). */
	renderWhy: function(flow, res) {
		var err = (res && res.message != null && res.denied != null) ? res.message : fmt.callError(res),
		    answers = err ? [] : fmt.whyConnections(res, flow),
		    body;

		if (err)
			body = [ page.note('warning', _('The daemon could not explain it: %s').format(err)) ];
		else if (!answers.length)
			body = [ E('p', {}, [ _('No connection matches: conntrack holds no entry for it any more (it ended, or a notrack rule keeps it out of conntrack).') ]) ];
		else
			body = answers.map(L.bind(this.renderWhyAnswer, this));

		return body.concat([
			E('div', { 'class': 'right' }, [
				E('button', { 'class': 'cbi-button', 'click': function() { ui.hideModal(); } }, [ _('Close') ])
			])
		]);
	},

	handleWhy: function(flow) {
		var a = fmt.whyArgs(flow);

		return callWhy(a.address, a.proto, a.src, a.dst, a.sport, a.dport, a.address ? 100 : undefined)
			.catch(fmt.callFailure)
			.then(L.bind(function(res) {
				ui.showModal(_('Why is this flow not offloaded?'), this.renderWhy(flow, res));
			}, this));
	},

	renderFlowTable: function() {
		var self = this,
		    shown = this.visibleFlows(),
		    titles = columns.map(function(c) {
			var mark = (self.sortKey == c[0]) ? (self.sortDesc ? ' \u25bc' : ' \u25b2') : '';

			return E('th', {
				'class': 'th' + (self.sortKey == c[0] ? ' active' : ''),
				'style': 'cursor:pointer',
				'title': _('Sort by %s').format(c[1]),
				'click': function() { self.handleSort(c[0]); }
			}, [ c[1] + mark ]);
		});

		titles.push(E('th', { 'class': 'th cbi-section-actions' }, [ '' ]));

		var rows = shown.map(function(f) {
			var r = fmt.flowRow(f), rate = self.rates[f.id];

			return E('tr', { 'class': 'tr cbi-section-table-row', 'data-flow': String(f.id) }, [
				td(_('Protocol'), [ r.proto, ' ', E('small', {}, [ r.family ]) ]),
				td(_('Source'), [
					fmt.endpoint(f.original && f.original.src, f.original && f.original.sport),
					f.local ? E('br') : '',
					f.local ? E('small', { 'class': 'fastpath-local' }, [ _('to or from the router itself') ]) : ''
				]),
				td(_('Destination'), [
					fmt.endpoint(f.original && f.original.dst, f.original && f.original.dport),
					E('br'), E('small', { 'title': _('Reply direction') }, [ _('reply %s').format(r.reply) ])
				]),
				td(_('Offloaded'), [ r.offload, r.state ? E('br') : '', r.state ? E('small', {}, [ r.state ]) : '' ]),
				td(_('Counters'), r.counters),
				td(_('Rate'), (rate != null) ? fmt.bitrate(rate) : '\u2013'),
				td(_('Timeout'), r.timeout),
				E('td', { 'class': 'td cbi-section-actions' }, [ self.whyButton(f), ' ', self.cutButton(f) ])
			]);
		});

		return E('div', { 'id': 'fastpath-flows' }, [
			this.queryError ? page.note('warning', _('The daemon refused the filter: %s').format(this.queryError)) : '',
			E('p', {}, [ _('Showing %d of %d flows.').format(shown.length, this.total || 0) ]),
			this.truncated ? page.note('notice', _('The daemon sent only the flows that fit in one ubus message; narrow the list with the filters above.')) : '',
			page.table(titles, rows, _('No flow matches.'))
		]);
	},

	renderCutTable: function(nowMs) {
		var self = this, s = this.cuts || {}, cuts = fmt.list(s.cuts), writable = page.writable(),
		    titles = [ _('Connection'), _('Reason'), _('Trigger'), _('Since'), _('Expires'), _('Dropped'), _('Where') ];

		var rows = cuts.map(function(c) {
			var r = fmt.cutRow(c, nowMs);

			return page.row(titles, [
				r.original, r.reason, r.trigger, r.since, r.expires, r.dropped, r.where
			], writable ? [
				E('td', { 'class': 'td cbi-section-actions' }, [ E('button', {
					'class': 'cbi-button cbi-button-neutral',
					'click': ui.createHandlerFn(self, 'handleRelease', c)
				}, [ _('Release') ]) ])
			] : []);
		});

		return E('div', { 'id': 'fastpath-cuts' }, [
			E('p', {}, [ fmt.cutSummarySentence(s), ' ', fmt.cutCountsSentence(s), ' ', fmt.more(s.cuts_total, cuts.length) ]),
			page.table(titles.concat(writable ? [ '' ] : []), rows, _('No connection is cut.'))
		]);
	},

	redraw: function() {
		if (this.flowBox)
			dom.content(this.flowBox, this.renderFlowTable());

		if (this.cutBox)
			dom.content(this.cutBox, this.renderCutTable(Date.now()));
	},

	refresh: function() {
		return this.fetch().then(L.bind(function(data) {
			this.update(data, Date.now());
			this.redraw();
		}, this));
	},

	handleCut: function(flow) {
		var reason = E('input', {
			'class': 'cbi-input-text',
			'type': 'text',
			'id': 'fastpath-cut-reason',
			'maxlength': '200',
			'style': 'width:100%',
			'placeholder': _('e.g. unknown peer flooding the uplink')
		}), expiry = (this.cuts && this.cuts.expiry_s) || 10;

		return page.confirm(_('Cut this connection?'), [
			E('p', {}, [ E('strong', {}, [ String(flow.proto || '').toUpperCase() + ' ' + fmt.tuple(flow.original) ]) ]),
			flow.local ? page.note('warning',
				_('This connection starts or ends on the router itself; if it is your own session (LuCI, SSH), cutting it locks you out until it expires.')) : '',
			E('p', {}, [ _('Its frames are dropped in both directions, in the fast path where the router can, for as long as they keep coming and %s after the last one.').format(fmt.duration(expiry)) ]),
			E('label', { 'for': 'fastpath-cut-reason' }, [ _('Reason') ]),
			E('p', {}, [ reason ])
		], _('Cut'), 'cbi-button-negative', 'fastpath-cut-confirm', L.bind(function() {
			return this.applyCut(flow, reason.value);
		}, this));
	},

	applyCut: function(flow, reason) {
		var a = fmt.cutArgs(flow, reason);

		return callCut(a.proto, a.src, a.dst, a.sport, a.dport, a.reason).then(L.bind(function(res) {
			var err = fmt.callError(res);

			if (err)
				page.notify(_('The connection was not cut: %s').format(err), 'danger');
			else
				page.notify(fmt.cutOutcome(res, fmt.tuple(flow.original)), (res && res.conntrack_only > 0) ? 'warning' : 'info');
		}, this)).catch(L.bind(page.refused, null, _('The connection was not cut'))).then(L.bind(this.refresh, this));
	},

	handleRelease: function(c) {
		var a = fmt.uncutArgs(c);

		return callUncut(a.proto, a.src, a.dst, a.sport, a.dport).then(L.bind(function(res) {
			var err = fmt.callError(res);

			if (err)
				page.notify(_('The cut was not released: %s').format(err), 'danger');
			else if (!(res && res.released > 0))
				page.notify(_('Nothing to release: the cut had already expired.'), 'info');
			else
				page.notify(_('Released %s.').format(fmt.tuple(c.original)), 'info');
		}, this)).catch(L.bind(page.refused, null, _('The cut was not released'))).then(L.bind(this.refresh, this));
	},

	/* The daemon-side filters; changing one fetches again. */
	renderQuery: function() {
		var self = this, q = this.queryState;

		function select(field, options) {
			return E('select', {
				'class': 'cbi-input-select',
				'change': function(ev) { q[field] = ev.target.value; return self.refresh(); }
			}, options.map(function(o) {
				return E('option', { 'value': o[0], 'selected': (q[field] == o[0]) ? '' : null }, [ o[1] ]);
			}));
		}

		function field(label, input) {
			return E('label', { 'class': 'fastpath-filter' }, [ E('span', {}, [ label ]), input ]);
		}

		return E('div', { 'class': 'cbi-section-node', 'id': 'fastpath-filters' }, [
			E('style', {}, [ '#fastpath-filters{display:flex;flex-wrap:wrap;align-items:center;gap:.4em 1.2em;padding:.5em 0}' +
				'.fastpath-filter{display:inline-flex;align-items:center;gap:.4em;margin:0;white-space:nowrap}' +
				'.fastpath-filter input[type=text],.fastpath-filter input[type=number],.fastpath-filter select{width:auto;min-width:0;margin:0}' ]),
			field(_('Search'), E('input', {
				'class': 'cbi-input-text',
				'type': 'text',
				'id': 'fastpath-search',
				'style': 'width:11em',
				'placeholder': _('address or port'),
				'input': function(ev) { self.textFilter = ev.target.value; self.redraw(); }
			})),
			field(_('Offload'), select('offload', [
				[ '', _('all flows') ],
				[ 'any', _('offloaded') ],
				[ 'software', _('in software') ],
				[ 'hardware', _('in hardware') ],
				[ 'none', _('not offloaded') ]
			])),
			field(_('Protocol'), select('proto', [
				[ '', _('any') ], [ 'tcp', 'TCP' ], [ 'udp', 'UDP' ], [ 'icmp', 'ICMP' ], [ 'icmpv6', 'ICMPv6' ]
			])),
			field(_('Address'), E('input', {
				'class': 'cbi-input-text',
				'type': 'text',
				'style': 'width:9em',
				'placeholder': '192.168.1.23',
				'change': function(ev) { q.address = ev.target.value.trim(); return self.refresh(); }
			})),
			field(_('At most'), E('input', {
				'class': 'cbi-input-text',
				'type': 'number',
				'min': '1',
				'style': 'width:5.5em',
				'value': String(q.limit),
				'change': function(ev) { q.limit = +ev.target.value || DEFAULT_LIMIT; return self.refresh(); }
			})),
			page.writable() ? field(_('Offer Cut for the router\'s own connections'), E('input', {
				'type': 'checkbox',
				'id': 'fastpath-cut-local',
				'change': function(ev) { self.cutLocal = ev.target.checked; self.redraw(); }
			})) : ''
		]);
	},

	render: function(data) {
		this.update(data, Date.now());

		this.flowBox = E('div', {}, [ this.renderFlowTable() ]);
		this.cutBox = E('div', {}, [ this.renderCutTable(Date.now()) ]);

		poll.add(L.bind(this.refresh, this), 5);

		return E('div', {}, [
			E('h2', {}, [ _('Flows') ]),
			E('div', { 'class': 'cbi-map-descr' }, [ _('Connections tracked by the router, with what offloads them. Rates are measured between two refreshes.') ]),
			E('div', { 'class': 'cbi-section' }, [ this.renderQuery(), this.flowBox ]),
			E('div', { 'class': 'cbi-section' }, [ E('h3', {}, [ _('Active cuts') ]), this.cutBox ])
		]);
	},

	handleSaveApply: null,
	handleSave: null,
	handleReset: null
});
