'use strict';
'require view';
'require dom';
'require poll';
'require rpc';
'require ui';
'require fastpath.format as fmt';
'require fastpath.page as page';

/*
 * Network > Flow Offload > Status: what really runs and why, in plain
 * words, refreshed every five seconds.
 */

var callStatus = rpc.declare({
	object: 'fastpath',
	method: 'status',
	expect: { '': {} }
});

var callCapabilities = rpc.declare({
	object: 'fastpath',
	method: 'capabilities',
	expect: { '': {} }
});

/* Write calls keep the raw answer: {"error": ...} or a ubus status code. */
var callSet = rpc.declare({
	object: 'fastpath',
	method: 'set',
	params: [ 'mode' ]
});

var callReload = rpc.declare({
	object: 'fastpath',
	method: 'reload'
});

/*
 * LuCI's dom.append takes an array's items one level deep, so child lists
 * are flat; every text goes in as [ text ] (see fastpath.page).
 */
function section(title, children) {
	return E('div', { 'class': 'cbi-section' }, [ E('h3', {}, [ title ]) ].concat(flat(children)));
}

function flat(children) {
	return [].concat.apply([], children.map(function(c) { return Array.isArray(c) ? flat(c) : [ c ]; }));
}

/* A two-column label/value table like luci-mod-status uses. */
function facts(rows) {
	return E('table', { 'class': 'table' }, rows.filter(function(r) {
		return r[1] != null && r[1] !== '';
	}).map(function(r) {
		return E('tr', { 'class': 'tr' }, [
			E('td', { 'class': 'td left', 'width': '33%' }, [ r[0] ]),
			E('td', { 'class': 'td left' }, [ r[1] ])
		]);
	}));
}

/* A table of rows of cells under titles. */
function grid(titles, rows, empty) {
	return page.table(titles, rows.map(function(r) { return page.row(titles, r); }), empty);
}

return view.extend({
	load: function() {
		return Promise.all([
			callStatus().catch(fmt.callFailure),
			L.resolveDefault(callCapabilities(), {})
		]);
	},

	renderMode: function(st) {
		var m = st.mode || {},
		    decisions = fmt.list(st.decisions).filter(function(d) { return d.reason != m.reason; });

		return section(_('Offload mode'), [
			E('p', { 'class': 'fastpath-sentence' }, [ E('strong', {}, [ fmt.modeSentence(st) ]) ]),
			m.reason ? E('p', {}, [ _('Why: %s').format(m.reason) ]) : '',
			facts([
				[ _('Requested'), fmt.modeLabel(m.requested) ],
				[ _('Running'), fmt.modeLabel(m.effective) ],
				[ _('fastpath version'), st.version ]
			]),
			fmt.list(st.errors).map(function(e) { return page.note('warning', e); }),
			decisions.length ? E('ul', { 'class': 'fastpath-decisions' }, decisions.map(function(d) {
				return E('li', {}, [ E('em', {}, [ d.topic ]), ': ', d.reason ]);
			})) : '',
			page.writable() ? this.renderModeControl(st) : ''
		]);
	},

	/*
	 * The selector and its buttons are built once per set of choices and
	 * kept across refreshes, so a mode the admin is choosing is not reset
	 * every five seconds.
	 */
	renderModeControl: function(st) {
		var m = st.mode || {},
		    choices = fmt.modeChoices(m.requested, this.capabilities && this.capabilities.modes);

		if (this.modeControl && this.modeChoices == choices.join(' '))
			return this.modeControl;

		var select = E('select', { 'class': 'cbi-input-select', 'id': 'fastpath-mode' }, choices.map(function(mode) {
			return E('option', { 'value': mode, 'selected': (mode == m.requested) ? '' : null }, [ fmt.modeLabel(mode) ]);
		}));

		select.value = m.requested || 'off';
		this.modeChoices = choices.join(' ');

		return this.modeControl = E('div', { 'class': 'cbi-section-actions' }, [
			select, ' ',
			E('button', {
				'class': 'cbi-button cbi-button-apply',
				'id': 'fastpath-mode-change',
				'click': ui.createHandlerFn(this, 'handleModeChange', select)
			}, [ _('Change mode…') ]), ' ',
			E('button', {
				'class': 'cbi-button cbi-button-reload',
				'id': 'fastpath-reload',
				'click': ui.createHandlerFn(this, 'handleReload')
			}, [ _('Re-apply now') ])
		]);
	},

	renderPlatform: function(p) {
		var c = fmt.chip(p);

		return section(_('Chipset'), [
			E('p', {}, [ p.hw_offload_reason || '' ]),
			facts([
				[ _('Model'), p.model || p.board_name ],
				[ _('Board'), p.board_name ],
				[ _('Target'), p.target ],
				[ _('SoC'), c ? (p.vendor ? '%s %s'.format(p.vendor, c) : c) : _('not recognised') ],
				[ _('Hardware offload'), p.hw_offload_capable
					? (p.hw_offload_engine ? _('possible (%s)').format(p.hw_offload_engine) : _('possible'))
					: _('not possible') ],
				[ _('Firmware'), p.release ]
			]),
			E('h4', {}, [ _('Evidence') ]),
			grid([ _('Source'), _('Value'), _('Conclusion') ], fmt.list(p.evidence).map(function(e) {
				return [ E('code', {}, [ e.source ]), e.value, e.meaning ];
			}), _('No evidence was collected.'))
		]);
	},

	renderFlowtable: function(st) {
		var ft = fmt.flowtableState(st.flowtable),
		    k = st.kernel || {};

		return section(_('Kernel flowtable'), [
			E('p', {}, [ ft.sentence ]),
			facts([
				[ _('Flowtable'), ft.name ],
				[ _('Devices in the plan'), ft.planned_devices ],
				[ _('Devices in the kernel'), ft.kernel_devices ],
				[ _('Flags in the plan'), ft.planned_flags ],
				[ _('Flags in the kernel'), ft.kernel_flags ],
				[ _('Linux'), k.release ]
			].concat(fmt.kernelRows(k))),
			fmt.list(k.missing).map(function(m) { return page.note('notice', m); })
		]);
	},

	renderFlows: function(st) {
		var hw = fmt.hwFlowsSentences(st.hw_flows);

		return section(_('Offloaded flows'), [
			E('p', {}, [ fmt.flowCountsSentence(st.flows) ]),
			hw[0] ? E('p', { 'id': 'fastpath-hw-flows' }, [ hw[0], E('br'), E('small', {}, [ st.hw_flows.reason ]) ]) : '',
			hw[1] ? page.note('notice', hw[1]) : '',
			E('p', {}, [ E('a', { 'href': L.url('admin/network/fastpath/flows') }, [ _('Show the flows') ]) ])
		]);
	},

	renderTunnels: function(st) {
		var tunnels = fmt.list(st.tunnels);

		return section(_('Tunnels'), tunnels.length ? tunnels.map(function(t) {
			return E('p', {}, [ fmt.tunnelSentence(t), t.reason ? E('br') : '', t.reason ? E('small', {}, [ t.reason ]) : '' ]);
		}) : [ E('p', {}, [ E('em', {}, [ _('No tunnel is configured.') ]) ]) ]);
	},

	/* recheck_on_rule_change: what is compared, and what the last change of fw4's rules did. */
	renderRecheck: function(st) {
		var rc = st.recheck || {},
		    last = rc.last || {};

		if (!rc.firewall)
			return ''; /* a daemon that does not compare fw4's rules */

		return section(_('Firewall rule changes'), [
			E('p', {}, [ rc.enabled
				? _('On: when firewall4\'s forward-path rules really change, every offloaded flow goes through the firewall once, so the new rules decide; a reload that renders the same rules keeps every flow.')
				: _('Off: offloaded flows keep running when firewall4\'s rules change; new rules see only new connections.') ]),
			facts([
				[ _('Firewall rules now'), rc.firewall ],
				[ _('Flows last checked against'), rc.recorded ],
				[ _('Last change'), last.at ? last.reason : _('none since the daemon started') ]
			])
		]);
	},

	/* xdp_forward: only when the option is on (the daemon then gives a reason). */
	renderXDPForward: function(x) {
		if (!x.reason)
			return '';
		if (!x.active)
			return E('p', {}, [ _('Forwarding in the driver (XDP) is not running: %s').format(x.reason) ]);
		return E('p', {}, [ _('Forwarding in the driver (XDP) on %s: %d frames sent out in the driver, %d left to the kernel\'s flowtable, %d of no flow.')
			.format(fmt.list(x.devices).join(', '), x.forwarded, x.passed, x.missed) ]);
	},

	renderCuts: function(st) {
		var s = st.cut || {};

		return section(_('Cuts'), [
			E('p', {}, [ fmt.cutSummarySentence(s) ]),
			s.reason ? E('p', {}, [ _('Why: %s').format(s.reason) ]) : '',
			E('p', {}, [ fmt.cutCountsSentence(s) ]),
			fmt.list(s.backends).length ? grid([ _('Device'), _('Cut frames dropped by'), _('Why') ], fmt.list(s.backends).map(function(b) {
				return [ b.device, fmt.backendLabel(b.backend), b.reason ];
			}), '') : '',
			this.renderXDPForward(s.xdp_forward || {}),
			E('h4', {}, [ _('Watched block lists') ]),
			grid([ _('Block list'), _('Problems') ], fmt.list(s.blocklists).map(function(b) {
				return [ fmt.blocklistLine(b), fmt.list(b.errors).length ? fmt.list(b.errors).join('; ') + ' ' + fmt.more(b.errors_total, b.errors.length) : _('none') ];
			}), _('No block list is watched.')),
			fmt.list(s.warnings).map(function(w) { return page.note('warning', w); })
		]);
	},

	/* The whole page body for one status answer (or failure); polling swaps it. */
	renderStatus: function(answer) {
		if (answer && answer.denied === true)
			return page.note('danger', _('Access denied: this login may not read fastpath\'s status (ACL group luci-app-fastpath).'));

		var st = fmt.shapeStatus(answer);

		if (!st)
			return page.note('danger', _('The fastpath daemon does not answer. Start it with /etc/init.d/fastpath start.'));

		return E('div', {}, [
			this.renderMode(st),
			this.renderPlatform(st.platform),
			this.renderFlowtable(st),
			this.renderFlows(st),
			this.renderTunnels(st),
			this.renderRecheck(st),
			this.renderCuts(st)
		]);
	},

	refresh: function(body) {
		return callStatus().catch(fmt.callFailure).then(L.bind(function(st) {
			dom.content(body, this.renderStatus(st));
		}, this));
	},

	handleModeChange: function(select) {
		var mode = select.value;

		return page.confirm(_('Change the offload mode?'), [
			E('p', {}, [ _('fastpath sets the firewall\'s offload switches to "%s" and re-applies its flowtable. Flows that are offloaded now stay offloaded.').format(fmt.modeLabel(mode)) ])
		], _('Change mode'), 'cbi-button-positive', 'fastpath-mode-confirm', L.bind(this.applyMode, this, mode));
	},

	applyMode: function(mode) {
		return callSet(mode).then(L.bind(function(res) {
			var err = fmt.callError(res);

			if (err)
				page.notify(_('The mode was not changed: %s').format(err), 'danger');
			else {
				page.notify(_('Offload mode set to %s.').format(fmt.modeLabel(mode)), 'info');

				if (this.body)
					dom.content(this.body, this.renderStatus(res));
			}
		}, this)).catch(L.bind(page.refused, null, _('The mode was not changed')));
	},

	handleReload: function() {
		return callReload().then(L.bind(function(res) {
			var err = fmt.callError(res);

			if (err)
				page.notify(_('fastpath could not re-apply: %s').format(err), 'danger');
			else if (this.body)
				dom.content(this.body, this.renderStatus(res));
		}, this)).catch(L.bind(page.refused, null, _('fastpath could not re-apply')));
	},

	render: function(data) {
		this.capabilities = fmt.shapeCapabilities(data[1]);

		var body = E('div', { 'id': 'fastpath-status' }, [ this.renderStatus(data[0]) ]);

		this.body = body;
		poll.add(L.bind(this.refresh, this, body), 5);

		return E('div', {}, [
			E('h2', {}, [ _('Flow Offload') ]),
			E('div', { 'class': 'cbi-map-descr' }, [ _('What the router really offloads, read back from the kernel, and why.') ]),
			body
		]);
	},

	handleSaveApply: null,
	handleSave: null,
	handleReset: null
});
