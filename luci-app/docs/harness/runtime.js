'use strict';
// A browser stand-in for LuCI's runtime, for screenshots of the views
// without a router: a real DOM E()/dom, ui modals and notifications, rpc
// answering from recorded answers, a plain renderer for form.Map, and the
// class loader of luci.js (require directives, function wrapper).
// It draws LuCI's structure (cbi-section, tables, buttons), not its theme.

(function() {
	var answers = window.FASTPATH_ANSWERS || {};
	var uciData = window.FASTPATH_UCI || {};
	var sources = window.FASTPATH_SOURCES || {};

	String.prototype.format = function() {
		var args = arguments, i = 0;
		return String(this).replace(/%(%|s|d)/g, function(m, c) {
			if (c == '%') return '%';
			var v = args[i++];
			return c == 'd' ? String(Math.floor(+v || 0)) : String(v);
		});
	};

	function append(node, c) {
		if (c == null || c === '' || c === false) return;
		if (Array.isArray(c)) { c.forEach(function(x) { append(node, x); }); return; }
		node.appendChild((c instanceof Node) ? c : document.createTextNode(String(c)));
	}

	function E(tag, attrs, children) {
		if (Array.isArray(tag)) {
			var f = document.createDocumentFragment();
			append(f, attrs);
			return f;
		}
		if (arguments.length == 2 && (typeof attrs != 'object' || attrs === null || Array.isArray(attrs) || attrs instanceof Node)) {
			children = attrs;
			attrs = {};
		}
		var el = document.createElement(tag);
		Object.keys(attrs || {}).forEach(function(k) {
			var v = attrs[k];
			if (v == null) return;
			if (typeof v == 'function') el.addEventListener(k, v);
			else el.setAttribute(k, v);
		});
		append(el, children);
		return el;
	}

	var L = {
		env: {},
		bind: function(fn, self) {
			var args = Array.prototype.slice.call(arguments, 2);
			return function() { return fn.apply(self, args.concat(Array.prototype.slice.call(arguments))); };
		},
		resolveDefault: function(p, d) { return Promise.resolve(p).catch(function() { return d; }); },
		url: function() { return '/cgi-bin/luci/' + Array.prototype.join.call(arguments, '/'); },
		isObject: function(v) { return v != null && typeof v == 'object'; },
		toArray: function(v) { return v == null ? [] : (Array.isArray(v) ? v : [ v ]); }
	};

	var main = function() { return document.getElementById('maincontent'); };

	var ui = {
		showModal: function(title, children) {
			ui.hideModal();
			var box = E('div', { 'class': 'modal' }, [ E('h4', {}, title), children ]);
			document.body.appendChild(E('div', { 'id': 'modal_overlay' }, box));
			return box;
		},
		hideModal: function() {
			var o = document.getElementById('modal_overlay');
			if (o) o.parentNode.removeChild(o);
		},
		addNotification: function(title, children, cls) {
			var n = E('div', { 'class': 'alert-message ' + (cls || '') }, [ title ? E('h4', {}, title) : '', children ]);
			main().insertBefore(n, main().firstChild);
			return n;
		},
		createHandlerFn: function(ctx, fn) {
			var args = Array.prototype.slice.call(arguments, 2), f = (typeof fn == 'string') ? ctx[fn] : fn;
			return function(ev) { return f.apply(ctx, args.concat([ ev ])); };
		}
	};

	var dom = {
		content: function(node, children) {
			while (node.firstChild) node.removeChild(node.firstChild);
			append(node, children);
			return node;
		},
		append: function(node, children) { append(node, children); return node; }
	};

	var rpc = {
		declare: function(d) {
			return function() {
				var a = answers[d.method], args = {}, given = arguments;
				(d.params || []).forEach(function(p, i) { if (given[i] !== undefined) args[p] = given[i]; });
				if (typeof a == 'function') a = a(args);
				var ret = (a === undefined) ? 4 : JSON.parse(JSON.stringify(a));
				if (d.expect) {
					for (var k in d.expect) {
						if (ret != null && k != '') ret = ret[k];
						var want = d.expect[k];
						if (ret == null || (Array.isArray(ret) ? 'array' : typeof ret) != (Array.isArray(want) ? 'array' : typeof want)) ret = want;
						break;
					}
				}
				return Promise.resolve(ret);
			};
		}
	};

	var poll = { add: function() {}, remove: function() {} };

	var uci = {
		load: function() { return Promise.resolve(); },
		get: function(c, s, o) {
			var sec = (uciData[c] || {})[s];
			return sec ? (o ? sec[o] : sec) : null;
		},
		get_first: function(c, t, o) {
			var secs = uci.sections(c, t);
			return secs.length ? (o ? secs[0][o] : secs[0]) : null;
		},
		sections: function(c, t) {
			return Object.keys(uciData[c] || {}).filter(function(id) {
				return !t || uciData[c][id]['.type'] == t;
			}).map(function(id) { return Object.assign({ '.name': id }, uciData[c][id]); });
		}
	};

	function makeClass(props) {
		var cls = function() {};
		Object.assign(cls.prototype, props);
		return cls;
	}

	/* form: enough to draw sections and their options the way LuCI lays them out. */
	function Option(section, name, title, description) {
		this.section = section; this.option = name; this.title = title; this.description = description;
		this.values = []; this.deps = [];
	}
	Option.prototype.value = function(k, l) { this.values.push([ k, l === undefined ? k : l ]); };
	Option.prototype.depends = function(f, v) { this.deps.push(typeof f == 'object' ? f : { [f]: v }); };
	Option.prototype.cfgvalue = function(sid) {
		var v = uci.get(this.section.map.config, sid, this.option);
		return v == null ? this.default : v;
	};
	Option.prototype.visible = function(sid) {
		var self = this;
		if (!this.deps.length) return true;
		return this.deps.some(function(d) {
			return Object.keys(d).every(function(k) { return uci.get(self.section.map.config, sid, k) == d[k]; });
		});
	};
	Option.prototype.widget = function(sid) {
		var v = this.cfgvalue(sid);
		switch (this.kind) {
		case 'Flag':
			return E('input', { 'type': 'checkbox', 'checked': (v == '1') ? '' : null });
		case 'ListValue':
			return E('select', { 'class': 'cbi-input-select' }, this.values.map(function(o) {
				return E('option', { 'value': o[0], 'selected': (o[0] == v) ? '' : null }, o[1]);
			}));
		case 'DynamicList':
			return E('div', { 'class': 'cbi-dynlist' }, L.toArray(v).map(function(x) {
				return E('div', { 'class': 'item' }, x);
			}).concat([ E('input', { 'class': 'cbi-input-text', 'placeholder': this.placeholder || '' }) ]));
		case 'DummyValue':
			return this.href ? E('a', { 'href': this.href }, v) : E('span', {}, v);
		default:
			return E('input', { 'class': 'cbi-input-text', 'value': (v == null || v == this.default) && uci.get(this.section.map.config, sid, this.option) == null ? '' : v, 'placeholder': this.placeholder || '' });
		}
	};
	function Section(map, kind, args) { this.map = map; this.kind = kind; this.args = args; this.options = []; }
	Section.prototype.option = function(cls, name, title, description) {
		var o = new Option(this, name, title, description);
		o.kind = cls.kind;
		this.options.push(o);
		return o;
	};
	Section.prototype.render = function() {
		var self = this, cfg = this.map.config;
		if (this.kind == 'NamedSection') {
			var sid = this.args[0];
			return E('div', { 'class': 'cbi-section' }, [
				E('h3', {}, this.args[2]),
				E('div', { 'class': 'cbi-section-node' }, this.options.filter(function(o) { return o.visible(sid); }).map(function(o) {
					return E('div', { 'class': 'cbi-value' }, [
						E('label', { 'class': 'cbi-value-title' }, o.title),
						E('div', { 'class': 'cbi-value-field' }, [ o.widget(sid), o.description ? E('div', { 'class': 'cbi-value-description' }, o.description) : '' ])
					]);
				}))
			]);
		}
		var cols = this.options.filter(function(o) { return o.modalonly !== true; });
		return E('div', { 'class': 'cbi-section' }, [
			E('h3', {}, this.args[1]),
			E('div', { 'class': 'cbi-section-descr' }, this.args[2] || ''),
			E('table', { 'class': 'table cbi-section-table' }, [
				E('tr', { 'class': 'tr table-titles' }, cols.map(function(o) { return E('th', { 'class': 'th' }, o.title); }).concat([ E('th', { 'class': 'th' }, '') ]))
			].concat(uci.sections(cfg, this.args[0]).map(function(s) {
				return E('tr', { 'class': 'tr' }, cols.map(function(o) {
					var v = o.cfgvalue(s['.name']);
					if (o.kind == 'ListValue') v = (o.values.filter(function(x) { return x[0] == v; })[0] || [ v, v ])[1];
					return E('td', { 'class': 'td' }, v);
				}).concat([ E('td', { 'class': 'td cbi-section-actions' }, [
					E('button', { 'class': 'cbi-button cbi-button-edit' }, _('Edit')), ' ',
					E('button', { 'class': 'cbi-button cbi-button-remove' }, _('Delete'))
				]) ]));
			}))),
			E('div', { 'class': 'cbi-section-create' }, E('button', { 'class': 'cbi-button cbi-button-add' }, _('Add')))
		]);
	};
	var form = { Map: function(config, title, description) { this.config = config; this.title = title; this.description = description; this.sections = []; } };
	form.Map.prototype.section = function(cls) {
		var s = new Section(this, cls.kind, Array.prototype.slice.call(arguments, 1));
		this.sections.push(s);
		return s;
	};
	form.Map.prototype.render = function() {
		return Promise.resolve(E('div', { 'class': 'cbi-map' }, [
			E('h2', {}, this.title), E('div', { 'class': 'cbi-map-descr' }, this.description),
			this.sections.map(function(s) { return s.render(); })
		]));
	};
	[ 'NamedSection', 'TypedSection', 'GridSection', 'TableSection', 'Value', 'Flag', 'ListValue', 'DynamicList', 'DummyValue', 'Button' ].forEach(function(k) {
		form[k] = { kind: k };
	});

	var modules = {
		baseclass: { extend: makeClass },
		view: { extend: makeClass },
		dom: dom, poll: poll, rpc: rpc, ui: ui, form: form, uci: uci
	};

	var requirematch = /^require[ \t]+(\S+)(?:[ \t]+as[ \t]+([a-zA-Z_]\S*))?$/, strictmatch = /^use[ \t]+strict$/;

	function load(name) {
		if (modules[name]) return modules[name];
		var source = sources[name], deps = [], args = '';
		for (var i = 0, off = -1, prev = -1, quote = -1, comment = -1, esc = false; i < source.length; i++) {
			var chr = source.charCodeAt(i);
			if (esc) esc = false;
			else if (comment != -1) { if ((comment == 47 && chr == 10) || (comment == 42 && prev == 42 && chr == 47)) comment = -1; }
			else if ((chr == 42 || chr == 47) && prev == 47) comment = chr;
			else if (chr == 92) esc = true;
			else if (chr == quote) {
				var s = source.substring(off, i), m = requirematch.exec(s);
				if (m) { deps.push(load(m[1])); args += ', ' + (m[2] || m[1].replace(/[^a-zA-Z0-9_]/g, '_')); }
				else if (!strictmatch.exec(s)) break;
				off = -1; quote = -1;
			}
			else if (quote == -1 && (chr == 34 || chr == 39)) { off = i + 1; quote = chr; }
			prev = chr;
		}
		var factory = eval('(function(window, document, L' + args + ') { ' + source + '\n})');
		var cls = factory.apply(factory, [ window, document, L ].concat(deps));
		return (modules[name] = new cls());
	}

	window._ = function(s) { return s; };
	window.N_ = function(n, s, p) { return n == 1 ? s : p; };
	window.E = E;
	window.L = L;

	/* Renders a view (or an overview include) into #maincontent like LuCI's view.__init__. */
	window.renderView = function(name, after) {
		var v = load(name);
		return Promise.resolve(v.load()).then(function(data) { return v.render(data); }).then(function(node) {
			if (v.title) node = E('div', { 'class': 'cbi-section' }, [ E('h3', {}, v.title), node ]);
			dom.content(main(), node);
			if (name.indexOf('view.fastpath.settings') == 0)
				main().appendChild(E('div', { 'class': 'cbi-page-actions' }, [
					E('button', { 'class': 'cbi-button cbi-button-apply' }, _('Save & Apply')), ' ',
					E('button', { 'class': 'cbi-button cbi-button-save' }, _('Save')), ' ',
					E('button', { 'class': 'cbi-button cbi-button-reset' }, _('Reset'))
				]));
			return after ? after(main()) : null;
		}).catch(function(e) {
			dom.content(main(), E('pre', { 'class': 'alert-message danger' }, String(e && e.stack || e)));
		}).then(function() { document.body.setAttribute('data-rendered', '1'); });
	};
})();
