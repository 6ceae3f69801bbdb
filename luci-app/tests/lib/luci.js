'use strict';
// A small stand-in for LuCI's browser runtime, enough to load our class
// files the way luci.js does and to drive their load() and render().
//
// Loading follows luci.js compileClass(): the leading string literals of
// the source are scanned for 'use strict' and 'require <class> [as <name>]'
// directives (the first other string ends the header), then the source
// runs as the body of function(window, document, L, <names...>) and must
// return a class, which the loader instantiates. E, _ and N_ are globals in
// LuCI; here they are passed in beside window/document/L so no test touches
// node's globals except String.prototype.format, which LuCI also adds.

const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');

const RESOURCES = path.resolve(__dirname, '..', '..', 'htdocs', 'luci-static', 'resources');

const requirematch = /^require[ \t]+(\S+)(?:[ \t]+as[ \t]+([a-zA-Z_]\S*))?$/;
const strictmatch = /^use[ \t]+strict$/;

// The same scanner as luci.js; returns [{ name, as }] and where the header ended.
function scanRequires(source) {
	const deps = [];
	let headerEnd = source.length;
	for (let i = 0, off = -1, prev = -1, quote = -1, comment = -1, esc = false; i < source.length; i++) {
		const chr = source.charCodeAt(i);
		if (esc) {
			esc = false;
		} else if (comment != -1) {
			if ((comment == 47 && chr == 10) || (comment == 42 && prev == 42 && chr == 47))
				comment = -1;
		} else if ((chr == 42 || chr == 47) && prev == 47) {
			comment = chr;
		} else if (chr == 92) {
			esc = true;
		} else if (chr == quote) {
			const s = source.substring(off, i);
			const m = requirematch.exec(s);
			if (m) {
				deps.push({ name: m[1], as: m[2] || m[1].replace(/[^a-zA-Z0-9_]/g, '_') });
			} else if (!strictmatch.exec(s)) {
				headerEnd = off - 1;
				break;
			}
			off = -1;
			quote = -1;
		} else if (quote == -1 && (chr == 34 || chr == 39)) {
			off = i + 1;
			quote = chr;
		}
		prev = chr;
	}
	return { deps, headerEnd };
}

// LuCI's String.prototype.format, reduced to what our files use. Anything
// else throws, so a view cannot rely on a conversion the stub fakes.
function installFormat() {
	if (String.prototype.format && String.prototype.format.fastpathStub)
		return;
	const format = function() {
		const args = Array.prototype.slice.call(arguments);
		let i = 0;
		return String(this).replace(/%(%|s|d)/g, (m, c) => {
			if (c == '%')
				return '%';
			if (i >= args.length)
				throw new Error(`format: too few arguments for "${this}"`);
			const v = args[i++];
			return c == 'd' ? String(Math.floor(+v || 0)) : String(v);
		}).replace(/%[^%sd ]/g, (m) => {
			throw new Error(`format: unsupported conversion ${m} in "${this}"`);
		});
	};
	format.fastpathStub = true;
	Object.defineProperty(String.prototype, 'format', { value: format, configurable: true, writable: true });
}

// A node of the stub DOM. E() builds these; tests read them as text.
class Node {
	constructor(tag, attrs, children) {
		this.tag = tag;
		this.attrs = attrs || {};
		this.children = [];
		this.value = this.attrs.value;
		if (children !== undefined)
			append(this, children);
	}
	appendChild(c) { this.children.push(c); return c; }
	get textContent() { return text(this); }
	// What String(node) gives in a browser, e.g. "[object HTMLDivElement]".
	toString() { return `[object HTML${this.tag.charAt(0).toUpperCase()}${this.tag.slice(1)}Element]`; }
	get classList() {
		const n = this;
		return {
			contains: (c) => String(n.attrs.class || '').split(/\s+/).includes(c),
			add: (c) => { n.attrs.class = `${n.attrs.class || ''} ${c}`.trim(); },
			remove: (c) => { n.attrs.class = String(n.attrs.class || '').split(/\s+/).filter((x) => x != c).join(' '); }
		};
	}
	// Every descendant for which pred holds, in document order.
	findAll(pred) {
		const out = [];
		const walk = (n) => {
			for (const c of n.children) {
				if (c instanceof Node) {
					if (pred(c))
						out.push(c);
					walk(c);
				}
			}
		};
		walk(this);
		return out;
	}
	byClass(cls) { return this.findAll((n) => n.classList.contains(cls)); }
	byTag(tag) { return this.findAll((n) => n.tag == tag); }
	// Calls an event handler given as attribute (LuCI's E binds on* and plain event names).
	fire(event, ev) {
		const h = this.attrs[event] || this.attrs['on' + event];
		if (typeof h != 'function')
			throw new Error(`<${this.tag}> has no ${event} handler`);
		return h.call(this, Object.assign({ target: this, currentTarget: this, preventDefault() {} }, ev || {}));
	}
}

// luci.js dom.append(), rule for rule: an array's items go in one level
// deep, a Node as itself and anything else as a text node (so null reads
// "null" and a nested array "[object HTMLDivElement],..."); a function is
// called with the node; a lone Node is appended; any other lone value
// replaces the content as innerHTML, so markup in it becomes elements.
function append(node, children) {
	if (Array.isArray(children)) {
		for (const c of children)
			node.children.push(c instanceof Node ? c : `${c}`);
		return;
	}
	if (typeof children == 'function')
		return append(node, children(node));
	if (children instanceof Node) {
		node.children.push(children);
		return;
	}
	if (children !== null && children !== undefined)
		node.children = parseHTML(`${children}`);
}

const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);
const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function decode(s) {
	return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (m, e) => {
		if (e[0] == '#')
			return String.fromCodePoint(e[1] == 'x' || e[1] == 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
		return ENTITIES[e.toLowerCase()] ?? m;
	});
}

// What innerHTML makes of a string, roughly as a browser does: tags become
// elements (with their attributes, handlers included), the rest text.
function parseHTML(html) {
	const root = new Node('#innerhtml', {});
	const stack = [root];
	const re = /<\/?([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s"'>\/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s*\/?>/g;
	let last = 0, m;
	while ((m = re.exec(html)) != null) {
		if (m.index > last)
			stack[stack.length - 1].children.push(decode(html.slice(last, m.index)));
		last = re.lastIndex;
		const tag = m[1].toLowerCase();
		if (m[0][1] == '/') {
			const i = stack.map((n) => n.tag).lastIndexOf(tag);
			if (i > 0)
				stack.length = i;
			continue;
		}
		const attrs = {};
		m[2].replace(/([^\s"'>\/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g, (a, k, v1, v2, v3) => {
			attrs[k.toLowerCase()] = decode(v1 ?? v2 ?? v3 ?? '');
		});
		const el = new Node(tag, attrs);
		el.fromHTML = true;
		stack[stack.length - 1].children.push(el);
		if (!VOID.has(tag))
			stack.push(el);
	}
	if (last < html.length)
		stack[stack.length - 1].children.push(decode(html.slice(last)));
	return root.children;
}

function text(n) {
	if (n == null)
		return '';
	if (typeof n == 'string')
		return n;
	if (Array.isArray(n))
		return n.map(text).join(' ');
	return n.children.map(text).join(' ');
}

// luci.js E() = dom.create(html, [attr], [data]): the second argument is
// the attributes when it is any object but an array (a Node or a function
// there are taken as attributes too, and the children are lost).
function E(tag, attrs, children) {
	if (!(attrs instanceof Object) || Array.isArray(attrs)) {
		children = attrs;
		attrs = null;
	}
	if (Array.isArray(tag)) {
		const f = new Node('#fragment', {});
		for (const c of tag)
			f.children.push(c instanceof Node ? c : E(c));
		return f;
	}
	if (typeof tag == 'string' && tag.charCodeAt(0) == 60)
		throw new Error('E("<...>"): dom.parse is not available in the stub');
	const a = {};
	if (attrs && !(attrs instanceof Node))
		for (const k in attrs)
			if (Object.prototype.hasOwnProperty.call(attrs, k) && attrs[k] != null)
				a[k] = attrs[k];
	return new Node(tag, a, children);
}

// Collapses white space so expected sentences compare with rendered text.
function squash(s) {
	return String(s).replace(/\s+/g, ' ').trim();
}

// rpc stand-in: declare() returns a function that answers from `answers`
// (method -> value or function(params) -> value) and applies `expect` the
// way rpc.js documents it.
function makeRpc(answers, calls) {
	return {
		declare(opts) {
			const decl = Object.assign({}, opts);
			const fn = function() {
				const params = {};
				(decl.params || []).forEach((p, i) => {
					if (arguments[i] !== undefined)
						params[p] = arguments[i];
				});
				calls.push({ object: decl.object, method: decl.method, params });
				return Promise.resolve().then(() => {
					let a = answers[`${decl.object}.${decl.method}`];
					if (a === undefined)
						a = answers[decl.method];
					if (typeof a == 'function')
						a = a(params);
					if (a === undefined)
						throw new Error(`no recorded answer for ${decl.object}.${decl.method}`);
					if (a instanceof RPCFailure)
						throw new Error(`RPC call to ${decl.object}/${decl.method} failed with error ${a.code}: ${a.message}`);
					let ret = JSON.parse(JSON.stringify(a));
					if (decl.expect) {
						for (const key in decl.expect) {
							if (ret != null && key != '')
								ret = ret[key];
							const want = decl.expect[key];
							if (ret == null || kind(ret) != kind(want))
								ret = want;
							break;
						}
					}
					return ret;
				});
			};
			fn.declaration = decl;
			return fn;
		}
	};
}

// A JSON-RPC error as uhttpd answers it, e.g. rpcError(-32002, 'Access
// denied') for a session without the ACL; rpc.js rejects the call with an
// RPCError "RPC call to obj/method failed with error <code>: <message>".
class RPCFailure {
	constructor(code, message) { this.code = code; this.message = message; }
}
const rpcError = (code, message) => new RPCFailure(code, message);

function kind(v) {
	return Array.isArray(v) ? 'array' : typeof v;
}

// form stand-in: records maps, sections and options with their settings.
function makeForm(uciData) {
	class AbstractValue {
		constructor(section, option, title, description) {
			this.section = section;
			this.option = option;
			this.title = title;
			this.description = description;
			this.values = [];
			this.deps = [];
		}
		value(key, label) { this.values.push([key, label === undefined ? key : label]); }
		depends(field, value) { this.deps.push(typeof field == 'object' ? field : { [field]: value }); }
		cfgvalue(sectionId) {
			const s = (uciData[this.section.map.config] || {})[sectionId] || {};
			return s[this.ucioption || this.option];
		}
	}
	const valueClasses = ['Value', 'Flag', 'ListValue', 'DynamicList', 'DummyValue', 'Button', 'MultiValue', 'TextValue', 'HiddenValue', 'RichListValue'];
	const form = {};
	valueClasses.forEach((name) => {
		form[name] = class extends AbstractValue {};
		Object.defineProperty(form[name], 'name', { value: name });
	});
	class AbstractSection {
		constructor(map, args) {
			this.map = map;
			this.args = args;
			this.options = [];
		}
		option(cls, option, title, description) {
			const o = new cls(this, option, title, description);
			o.kind = cls.name;
			this.options.push(o);
			return o;
		}
		taboption(tab, cls, option, title, description) {
			const o = this.option(cls, option, title, description);
			o.tab = tab;
			return o;
		}
		tab(name, title) { (this.tabs = this.tabs || []).push([name, title]); }
	}
	['TypedSection', 'NamedSection', 'GridSection', 'TableSection'].forEach((name) => {
		form[name] = class extends AbstractSection {};
		Object.defineProperty(form[name], 'name', { value: name });
	});
	form.Map = class Map {
		constructor(config, title, description) {
			this.config = config;
			this.title = title;
			this.description = description;
			this.sections = [];
			form.maps.push(this);
		}
		section(cls) {
			const s = new cls(this, Array.prototype.slice.call(arguments, 1));
			s.kind = cls.name;
			this.sections.push(s);
			return s;
		}
		chain(config) { (this.chained = this.chained || []).push(config); }
		render() { return Promise.resolve(new Node('div', { class: 'cbi-map', 'data-config': this.config }, [])); }
	};
	form.maps = [];
	return form;
}

function makeUci(uciData) {
	const sections = (config, type) => Object.keys(uciData[config] || {})
		.map((id) => Object.assign({ '.name': id }, uciData[config][id]))
		.filter((s) => !type || s['.type'] == type);
	return {
		loaded: [],
		load(config) { this.loaded.push(config); return Promise.resolve(config); },
		get(config, sid, opt) {
			const s = (uciData[config] || {})[sid];
			// Like uci.js: without an option name the whole section object.
			return s ? (opt ? s[opt] : Object.assign({ '.name': sid }, s)) : null;
		},
		get_first(config, type, opt) {
			const s = sections(config, type)[0];
			return s ? (opt ? s[opt] : s) : null;
		},
		sections(config, type, cb) {
			const l = sections(config, type);
			if (cb)
				l.forEach(cb);
			return l;
		}
	};
}

// Builds the runtime a view sees. `answers` are ubus answers by method.
// `opts.readonly`: the session has only read access to the view's ACL
// (L.hasViewPermission() is false then, as luci.js derives it from the menu node).
function makeRuntime(answers, uciData, opts) {
	installFormat();
	const rt = {
		calls: [],
		extends: [],
		polls: [],
		modals: [],
		notifications: [],
		uciData: uciData || {}
	};
	const makeExtend = (base) => (props) => {
		const cls = function() {};
		Object.assign(cls.prototype, props);
		cls.extendedFrom = base;
		rt.extends.push({ base, props, cls });
		return cls;
	};
	rt.modules = {
		baseclass: { extend: makeExtend('baseclass') },
		view: { extend: makeExtend('view') },
		rpc: makeRpc(answers || {}, rt.calls),
		poll: {
			add(fn, interval) { rt.polls.push({ fn, interval }); },
			remove(fn) { rt.polls = rt.polls.filter((p) => p.fn !== fn); }
		},
		ui: {
			// Like ui.js: the title through dom.create('h4', {}, title), the children through dom.append.
			showModal(title, children) {
				const node = new Node('div', { class: 'modal' }, [E('h4', {}, title)]);
				append(node, children);
				rt.modals.push({ title, node, open: true });
				return node;
			},
			hideModal() { rt.modals.forEach((m) => { m.open = false; }); },
			// Like ui.js: a click handler calling ctx[fn] (or fn) with the bound args and the event.
			createHandlerFn(ctx, fn, ...args) {
				const f = typeof fn == 'string' ? ctx[fn] : fn;
				if (typeof f != 'function')
					throw new Error(`createHandlerFn: ${fn} is not a method`);
				return (ev) => f.apply(ctx, args.concat([ev]));
			},
			addNotification(title, children, cls) {
				const node = new Node('div', { class: 'alert-message ' + (cls || '') }, title ? [E('h4', {}, title)] : []);
				append(node, children);
				rt.notifications.push({ title, node, cls, text: squash(text(node)) });
				return node;
			}
		},
		dom: {
			content(node, children) {
				node.children = [];
				append(node, children);
				return node;
			},
			append(node, children) { append(node, children); return node; },
			parse() { throw new Error('dom.parse is not available in the stub'); }
		},
		form: makeForm(rt.uciData),
		uci: makeUci(rt.uciData)
	};
	rt.L = {
		env: {},
		bind: (fn, self, ...args) => fn.bind(self, ...args),
		resolveDefault: (p, d) => Promise.resolve(p).catch(() => d),
		url: (...parts) => '/cgi-bin/luci/' + parts.join('/'),
		resource: (...parts) => '/luci-static/resources/' + parts.join('/'),
		isObject: (v) => v != null && typeof v == 'object',
		toArray: (v) => (v == null ? [] : Array.isArray(v) ? v : [v]),
		hasViewPermission: () => !(opts && opts.readonly)
	};
	rt.window = { setTimeout, clearTimeout, location: { href: '' } };
	rt.document = {
		getElementById: () => null,
		querySelector: () => null,
		createElement: (tag) => new Node(tag, {}, [])
	};
	rt.load = (name) => loadClass(name, rt);
	rt.runPolls = () => Promise.all(rt.polls.map((p) => p.fn()));
	return rt;
}

function fileOf(name) {
	return path.join(RESOURCES, name.replace(/\./g, '/') + '.js');
}

// Loads class `name` ("view.fastpath.status", "fastpath.format") like L.require.
function loadClass(name, rt) {
	rt.instances = rt.instances || {};
	if (rt.instances[name])
		return rt.instances[name];
	const file = fileOf(name);
	const source = fs.readFileSync(file, 'utf8');
	const { deps } = scanRequires(source);
	const names = [];
	const values = [];
	for (const d of deps) {
		let v = rt.modules[d.name];
		if (v === undefined) {
			if (!fs.existsSync(fileOf(d.name)))
				throw new Error(`${file}: 'require ${d.name}' names no stub and no file ${fileOf(d.name)}`);
			v = loadClass(d.name, rt);
		}
		names.push(d.as);
		values.push(v);
	}
	const before = rt.extends.length;
	const wrapper = `(function(window, document, L, E, _, N_${names.map((n) => ', ' + n).join('')}) { ${source}\n})`;
	const factory = vm.runInThisContext(wrapper, { filename: file });
	const cls = factory.apply(factory, [rt.window, rt.document, rt.L, E, (s) => s, (n, s, p) => (n == 1 ? s : p)].concat(values));
	const made = rt.extends.slice(before).filter((e) => e.cls === cls);
	if (typeof cls != 'function' || made.length != 1)
		throw new TypeError(`${file}: does not return a class made by one extend() call`);
	const instance = new cls();
	instance.__extends = rt.extends.length - before;
	instance.__base = made[0].base;
	rt.instances[name] = instance;
	return instance;
}

function readJSON(file) {
	return JSON.parse(fs.readFileSync(file, 'utf8'));
}

module.exports = { rpcError, RESOURCES, scanRequires, makeRuntime, loadClass, E, Node, text, squash, installFormat, readJSON, fileOf };
