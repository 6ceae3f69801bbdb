'use strict';
'require baseclass';

/*
 * Turns the answers of the `fastpath` ubus object into the words, numbers
 * and rows the views show. Pure functions only: no rpc, no DOM, so the
 * same code is tested in node against answers recorded from the daemon.
 */

function list(v) {
	return Array.isArray(v) ? v : [];
}

function num(v) {
	var n = +v;
	return isFinite(n) ? n : 0;
}

/*
 * The daemon's answers in the shapes of its Go types (src/status,
 * src/platform, src/cut): every field present and of its type, zero when
 * missing or malformed, lists never null. The views shape each answer once
 * and then trust it.
 */
var S = '', N = 0, B = false;

var TUPLE = { proto: S, src: S, dst: S, sport: N, dport: N };

var CUT = {
	original: TUPLE, reply: TUPLE, reason: S, trigger: S, since: S,
	expires_in_s: N, frames: N, bytes: N, in_fastpath: B
};

/* truncated, *_total: the daemon shortened a list to keep its answer under ubus's size limit. */
var SUMMARY = {
	enabled: B, in_fastpath: B, reason: S, devices: [ S ], expiry_s: N, set_size: N,
	backends: [ { device: S, backend: S, reason: S } ],
	xdp_forward: { active: B, reason: S, devices: [ S ], forwarded: N, missed: N, passed: N },
	active: N, frames_dropped: N, cuts: [ CUT ], truncated: B, warnings: [ S ], cuts_total: N, warnings_total: N,
	blocklists: [ { name: S, kind: S, source: S, entries: N, errors: [ S ], errors_total: N } ]
};

var PLATFORM = {
	board_name: S, model: S, target: S, release: S, compatible: [ S ], kernel: S,
	soc: S, vendor: S, hw_offload_capable: B, hw_offload_engine: S, hw_offload_reason: S,
	evidence: [ { source: S, value: S, meaning: S } ],
	devices: [ {
		name: S, kind: S, driver: S, conduit: S, lower: [ S ], master: S,
		hw_offload: B, oper_up: B, ifindex: N
	} ]
};

var KERNEL = { release: S, flowtable: B, netdev_table: B, ipip_rx_accel: B, ip6tnl_path: B, ct_delete_offloaded: B, missing: [ S ] };

var STATUS = {
	version: S,
	mode: { requested: S, effective: S, reason: S },
	decisions: [ { topic: S, reason: S } ],
	platform: PLATFORM,
	flowtable: {
		table: S, name: S, devices: [ S ], flags: [ S ], in_sync: B,
		kernel: {
			table_present: B, flowtable_present: B, devices: [ S ], hardware: B,
			counter: B, hook: S, priority: N, forward_rule: B, handle: N, chain_present: B
		}
	},
	flows: { total: N, offloaded: N, hw_offloaded: N, offloaded_age_s: N },
	hw_flows: { engine: S, read: B, bound: N, counters: B, reason: S, tables: [ { name: S, bound: N, counted: B, error: S } ] },
	kernel: KERNEL,
	tunnels: [ { 'interface': S, kind: S, device: S, remote: S, local: S, underlay: S, in_fastpath: B, reason: S } ],
	cut: SUMMARY,
	recheck: { enabled: B, firewall: S, digest: S, recorded: S, last: { at: S, flows: N, reason: S } },
	errors: [ S ], errors_total: N
};

var FLOWS = {
	flows: [ {
		id: N, family: S, proto: S, state: S, original: TUPLE, reply: TUPLE, offload: S,
		assured: B, packets: N, bytes: N, timeout_s: N, mark: N, local: B
	} ],
	total: N,
	limit: N,
	truncated: B
};

var CAPABILITIES = { platform: PLATFORM, kernel: KERNEL, modes: [ S ] };

function isObject(v) {
	return v != null && typeof(v) == 'object' && !Array.isArray(v);
}

function shape(v, schema) {
	if (typeof(schema) == 'string')
		return (typeof(v) == 'string') ? v : ((typeof(v) == 'number' && isFinite(v)) ? String(v) : '');

	if (typeof(schema) == 'number')
		return (typeof(v) == 'number' && isFinite(v)) ? v : 0;

	if (typeof(schema) == 'boolean')
		return v === true;

	if (Array.isArray(schema))
		return Array.isArray(v) ? v.map(function(x) { return shape(x, schema[0]); }) : [];

	var out = {}, src = isObject(v) ? v : {};

	for (var k in schema)
		out[k] = shape(src[k], schema[k]);

	return out;
}

/* A status answer, or null when it is not one (daemon down, access denied). */
function shapeStatus(v) {
	return (isObject(v) && isObject(v.mode)) ? shape(v, STATUS) : null;
}

function shapeFlows(v) {
	return shape(v, FLOWS);
}

function shapeCuts(v) {
	return shape(v, SUMMARY);
}

/* `capabilities` nests the platform beside the kernel and the modes; a bare platform is taken too. */
function shapeCapabilities(v) {
	if (isObject(v) && isObject(v.platform))
		return shape(v, CAPABILITIES);

	return { platform: shape(v, PLATFORM), kernel: shape(null, KERNEL), modes: [] };
}

function shapePlatform(v) {
	return shapeCapabilities(v).platform;
}

var MODES = [ 'off', 'software', 'hardware', 'auto' ];

/*
 * The modes to offer: those the daemon says this router can run (all when
 * it did not say), automatic always (it never asks for more than the
 * chipset can), and the one requested now, so the selector shows it.
 */
function modeChoices(requested, modes) {
	var can = list(modes);

	return MODES.filter(function(m) {
		return !can.length || can.indexOf(m) >= 0 || m == 'auto' || m == requested;
	});
}

/* Counters are 64 bit: print them whole, never through a 32-bit %d. */
function int(v) {
	return Math.floor(num(v)).toFixed(0);
}

/* The chip's marketing name ("qca9558" -> "QCA9558"), or null if unknown. */
function chip(platform) {
	var soc = platform ? platform.soc : null;

	if (!soc || soc == 'unknown')
		return null;

	return String(soc).toUpperCase();
}

/* Accepts a Status (which nests the platform) or a bare platform Info. */
function platformOf(answer) {
	if (isObject(answer) && 'platform' in answer)
		return isObject(answer.platform) ? answer.platform : {};

	return isObject(answer) ? answer : {};
}

function modeLabel(mode) {
	switch (mode) {
	case 'off':      return _('Off');
	case 'software': return _('Software offload');
	case 'hardware': return _('Hardware offload');
	case 'auto':     return _('Automatic');
	default:         return mode ? String(mode) : _('Unknown');
	}
}

/* One plain sentence saying what really runs and, if it differs, what was asked. */
function modeSentence(status) {
	var m = (status && status.mode) || {},
	    p = platformOf(status),
	    c = chip(p),
	    req = m.requested,
	    eff = m.effective;

	if (eff == 'hardware') {
		if (p.hw_offload_engine && c)
			return _('Flows are offloaded in hardware by the %s of the %s.').format(p.hw_offload_engine, c);

		return _('Flows are offloaded in hardware.');
	}

	if (eff == 'software') {
		if (req == 'hardware' || req == 'auto') {
			if (!p.hw_offload_capable)
				return c
					? _('Hardware offload is not possible on %s; flows are offloaded in software.').format(c)
					: _('Hardware offload is not possible on this router; flows are offloaded in software.');

			return _('Hardware offload was requested but is not running; flows are offloaded in software.');
		}

		if (p.hw_offload_capable && c)
			return _('Flows are offloaded in software; the %s could offload them in hardware.').format(c);

		return _('Flows are offloaded in software.');
	}

	if (!req || req == 'off')
		return _('Flow offloading is off: every packet takes the normal path through the firewall.');

	return _('%s was requested but is not running: no flow is offloaded.').format(modeLabel(req));
}

function flowCountsSentence(counts) {
	var total = num(counts && counts.total),
	    offloaded = num(counts && counts.offloaded),
	    hardware = num(counts && counts.hw_offloaded),
	    software = Math.max(offloaded - hardware, 0);

	if (total == 0)
		return _('No flows are tracked right now.');

	if (offloaded == 0)
		return _('None of the %d tracked flows is offloaded.').format(total);

	var s = _('%d of %d tracked flows are offloaded: %d in software, %d in hardware.')
		.format(offloaded, total, software, hardware);
	/* A big table's offloaded entries are counted only now and then. */
	var age = num(counts && counts.offloaded_age_s);
	return (age >= 1) ? s + ' ' + _('(offloaded flows counted %d s ago)').format(Math.round(age)) : s;
}

/*
 * What the offload engine itself holds (a MediaTek PPE's bound entries)
 * and whether its hardware flows carry byte counters: [ sentence, warning ]
 * ('' for no engine; the warning is '' where the counters are kept).
 */
function hwFlowsSentences(hw) {
	if (!hw || !hw.engine)
		return [ '', '' ];

	var sentence, warning = hw.counters ? '' :
		_('This chip\'s hardware flows carry no byte counters: once a flow is offloaded in hardware, its traffic is missing from conntrack\'s counts, nlbwmon and the connection list.');

	if (hw.read)
		sentence = _('%d entries are bound in the %s (one per direction of a flow).').format(num(hw.bound), hw.engine);
	else if (hw.counters)
		sentence = _('The %s counts the bytes of its hardware flows: conntrack\'s counts include their traffic.').format(hw.engine);
	else
		sentence = _('The %s\'s tables cannot be read (debugfs is not mounted, or no engine runs).').format(hw.engine);

	return [ sentence, warning ];
}

function flagsOfKernel(k) {
	var flags = [];

	if (k && k.hardware)
		flags.push('offload');

	if (k && k.counter)
		flags.push('counter');

	return flags;
}

function words(v) {
	var l = list(v).filter(function(x) { return typeof(x) == 'string' && x != ''; });
	return l.length ? l.join(', ') : _('none');
}

/*
 * What the kernel has against what the plan wants. Returns
 * { sentence, planned_devices, kernel_devices, planned_flags, kernel_flags }.
 */
function flowtableState(ft) {
	var k = (ft && ft.kernel) || {},
	    res = {
		name: '%s %s'.format((ft && ft.table) || 'inet fastpath', (ft && ft.name) || 'ft'),
		planned_devices: words(ft && ft.devices),
		kernel_devices: words(k.devices),
		planned_flags: words(ft && ft.flags),
		kernel_flags: words(flagsOfKernel(k)),
		in_sync: !!(ft && ft.in_sync)
	};

	if (!k.table_present && res.in_sync)
		res.sentence = _('fastpath keeps no flowtable in the kernel now, as planned.');
	else if (!k.table_present)
		res.sentence = _('The kernel has no fastpath table.');
	else if (!k.flowtable_present)
		res.sentence = _('The kernel has the fastpath table but no flowtable in it.');
	else if (ft.in_sync)
		res.sentence = _('The kernel\'s flowtable matches the plan.');
	else
		res.sentence = _('The kernel\'s flowtable differs from the plan.');

	if (k.table_present && !k.chain_present)
		res.sentence += ' ' + _('The forward chain that adds flows to it is missing.');
	else if (k.table_present && !k.forward_rule)
		res.sentence += ' ' + _('The forward rule that adds flows to it is missing.');

	return res;
}

function yesNo(v) {
	return v ? _('yes') : _('no');
}

/* The kernel features fastpath depends on, as [label, yes/no] rows. */
function kernelRows(k) {
	k = k || {};

	return [
		[ _('Flowtable support'), yesNo(k.flowtable) ],
		[ _('Netdev ingress tables (for cuts)'), yesNo(k.netdev_table) ],
		[ _('IPIP receive acceleration'), yesNo(k.ipip_rx_accel) ],
		[ _('ip6tnl tunnel path (IPv6 inside only)'), yesNo(k.ip6tnl_path) ],
		[ _('Deleting offloaded connections'), yesNo(k.ct_delete_offloaded) ]
	];
}

function tunnelSentence(t) {
	var under = t.underlay;

	/* No underlay: a kind the flowtable cannot follow, or one not found (the reason says which). */
	if (!under && !t.in_fastpath)
		return (t.kind
			? _('%s (%s, %s): its flows stay in the slow path.').format(t.device || '?', t.interface || '?', t.kind)
			: _('%s (%s): its flows stay in the slow path.').format(t.device || '?', t.interface || '?'));

	return (t.in_fastpath
		? _('%s (%s) reaches %s over %s, which is in the fast path.')
		: _('%s (%s) reaches %s over %s, which is not in the fast path.')
	).format(t.device || '?', t.interface || '?', t.remote || '?', under || '?');
}

function kindLabel(kind) {
	switch (kind) {
	case 'nftset': return _('nftables set');
	case 'banip':  return _('banIP set');
	case 'crowdsec': return _('CrowdSec set');
	case 'file':   return _('file');
	case 'uci':
	case 'list':   return _('address list');
	default:       return kind ? String(kind) : _('unknown');
	}
}

function blocklistLine(b) {
	return N_(num(b.entries), '%s (%s %s): %d entry', '%s (%s %s): %d entries')
		.format(b.name || '?', kindLabel(b.kind), b.source || '', num(b.entries));
}

function cutSummarySentence(s) {
	s = s || {};

	if (!s.enabled)
		return _('Cutting connections is off.');

	if (!s.in_fastpath)
		return _('A cut only deletes the connection\'s conntrack entry; its frames are not dropped in the fast path.');

	return _('Cut connections are dropped in the fast path on %s, before the flowtable; a cut stays while frames keep coming and ends %s after the last one.')
		.format(words(s.devices), duration(s.expiry_s));
}

/* Where a device drops cut frames: the daemon's backend names in words. */
function backendLabel(backend) {
	switch (backend) {
	case 'xdp':    return _('native XDP in the driver');
	case 'netdev': return _('netdev ingress table');
	default:       return backend ? String(backend) : _('unknown');
	}
}

function cutCountsSentence(s) {
	s = s || {};

	return N_(num(s.active), '%d active cut, %s frames dropped.', '%d active cuts, %s frames dropped.')
		.format(num(s.active), int(s.frames_dropped));
}

/* 1536 -> "1.50 KiB" */
function bytes(n) {
	var units = [ 'KiB', 'MiB', 'GiB', 'TiB', 'PiB' ], v = num(n), i = -1;

	if (v < 1024)
		return int(v) + ' B';

	while (v >= 1024 && i < units.length - 1) {
		v /= 1024;
		i++;
	}

	return v.toFixed(2) + ' ' + units[i];
}

/* bits per second -> "12.30 Mbit/s" */
function bitrate(bps) {
	var units = [ 'kbit/s', 'Mbit/s', 'Gbit/s', 'Tbit/s' ], v = num(bps), i = -1;

	if (v < 1000)
		return Math.round(v) + ' bit/s';

	while (v >= 1000 && i < units.length - 1) {
		v /= 1000;
		i++;
	}

	return v.toFixed(2) + ' ' + units[i];
}

/* seconds -> "45s", "2m 05s", "1h 02m", "3d 04h" */
function duration(seconds) {
	var s = Math.max(Math.round(num(seconds)), 0),
	    d = Math.floor(s / 86400), h = Math.floor(s / 3600) % 24,
	    m = Math.floor(s / 60) % 60, r = s % 60;

	function two(x) { return (x < 10 ? '0' : '') + x; }

	if (d > 0) return d + 'd ' + two(h) + 'h';
	if (h > 0) return h + 'h ' + two(m) + 'm';
	if (m > 0) return m + 'm ' + two(r) + 's';
	return r + 's';
}

/* RFC 3339 time -> "2m 05s ago"; Go's zero time and garbage -> null. */
function age(since, nowMs) {
	var t = Date.parse(since);

	if (!isFinite(t) || new Date(t).getUTCFullYear() < 2000)
		return null;

	return _('%s ago').format(duration(Math.max(nowMs - t, 0) / 1000));
}

function endpoint(addr, port) {
	var a = addr || '?';

	if (!num(port))
		return a;

	return (a.indexOf(':') >= 0 ? '[' + a + ']' : a) + ':' + num(port);
}

/* One direction of a connection: "192.168.1.23:51234 → 93.184.216.34:443" */
function tuple(t) {
	t = t || {};
	return endpoint(t.src, t.sport) + ' \u2192 ' + endpoint(t.dst, t.dport);
}

function offloadLabel(offload) {
	switch (offload) {
	case 'software': return _('Software');
	case 'hardware': return _('Hardware');
	default:         return _('No');
	}
}

/*
 * A counted flow has at least the packet that created it, so zeros mean
 * "not counted": conntrack accounting is off, or the flow is in hardware
 * whose driver keeps no counters (MT7621). Say so instead of "0 B".
 */
function counters(flow) {
	if (!num(flow.packets) && !num(flow.bytes))
		return (flow.offload == 'hardware') ? _('not counted by the hardware') : _('not counted');

	return N_(num(flow.packets), '%s packet, %s', '%s packets, %s').format(int(flow.packets), bytes(flow.bytes));
}

/*
 * conntrack reports no timeout for a flow the flowtable holds: the
 * flowtable keeps it while packets come and hands it back when they stop.
 */
function timeout(flow) {
	if (flow.offload && !num(flow.timeout_s))
		return _('held by the flowtable');

	return duration(flow.timeout_s);
}

/* Everything a flows table row shows, as text. */
function flowRow(flow) {
	return {
		id: flow.id,
		proto: String(flow.proto || '?').toUpperCase(),
		family: flow.family == 'ipv6' ? 'IPv6' : 'IPv4',
		state: flow.state || '',
		original: tuple(flow.original),
		reply: tuple(flow.reply),
		offload: offloadLabel(flow.offload),
		counters: counters(flow),
		timeout: timeout(flow)
	};
}

/* Sortable address key: every number zero padded, IPv4 before IPv6. */
function addrKey(addr) {
	var a = String(addr || '');

	if (a.indexOf(':') < 0)
		return '4 ' + a.split('.').map(function(p) { return ('000' + p).slice(-3); }).join('.');

	var halves = a.split('::'), head = halves[0] ? halves[0].split(':') : [],
	    tail = (halves.length > 1 && halves[1]) ? halves[1].split(':') : [], groups = head.slice();

	for (var i = head.length + tail.length; i < 8 && halves.length > 1; i++)
		groups.push('0');

	groups = groups.concat(tail);

	return '6 ' + groups.map(function(g) { return ('0000' + g.toLowerCase()).slice(-4); }).join(':');
}

var sortKeys = {
	id: function(f) { return num(f.id); },
	proto: function(f) { return String(f.proto || ''); },
	src: function(f) { return addrKey(f.original && f.original.src) + ' ' + ('00000' + num(f.original && f.original.sport)).slice(-5); },
	dst: function(f) { return addrKey(f.original && f.original.dst) + ' ' + ('00000' + num(f.original && f.original.dport)).slice(-5); },
	offload: function(f) { return f.offload == 'hardware' ? 2 : (f.offload == 'software' ? 1 : 0); },
	packets: function(f) { return num(f.packets); },
	bytes: function(f) { return num(f.bytes); },
	timeout: function(f) { return num(f.timeout_s); }
};

/* A sorted copy; ties keep conntrack's order. `rates` (id -> bit/s) enables key "rate". */
function sortFlows(flows, key, descending, rates) {
	var get = (key == 'rate')
		? function(f) { return num(rates && rates[f.id]); }
		: (sortKeys[key] || sortKeys.id);

	return list(flows).map(function(f, i) { return [ get(f), i, f ]; }).sort(function(a, b) {
		var c = (a[0] < b[0]) ? -1 : (a[0] > b[0] ? 1 : 0);
		return (descending ? -c : c) || (a[1] - b[1]);
	}).map(function(e) { return e[2]; });
}

/*
 * Client-side filter. `f.text` matches addresses, ports, protocol and state
 * (case-insensitive); `f.offload` is '', 'any', 'none', 'software' or
 * 'hardware' like the ubus method's argument; `f.proto` is exact.
 */
function filterFlows(flows, f) {
	f = f || {};

	var text = String(f.text || '').trim().toLowerCase();

	return list(flows).filter(function(flow) {
		if (f.proto && flow.proto != f.proto)
			return false;

		switch (f.offload || '') {
		case 'any':      if (!flow.offload) return false; break;
		case 'none':     if (flow.offload) return false; break;
		case 'software':
		case 'hardware': if (flow.offload != f.offload) return false; break;
		}

		if (!text)
			return true;

		var o = flow.original || {}, r = flow.reply || {},
		    hay = [ flow.proto, flow.state, o.src, o.dst, o.sport, o.dport, r.src, r.dst, r.sport, r.dport ]
			.join(' ').toLowerCase();

		return hay.indexOf(text) >= 0;
	});
}

/*
 * Per-flow bit/s between two polls, by flow id. Left out: flows that
 * restarted, and flows without byte counters (accounting off, or hardware
 * flows whose driver does not count), whose rate is unknown, not zero.
 */
function flowRates(previous, current, seconds) {
	var before = {}, rates = {};

	if (!(num(seconds) > 0))
		return rates;

	list(previous).forEach(function(f) { before[f.id] = num(f.bytes); });

	list(current).forEach(function(f) {
		if (before.hasOwnProperty(f.id) && num(f.bytes) > 0 && num(f.bytes) >= before[f.id])
			rates[f.id] = (num(f.bytes) - before[f.id]) * 8 / seconds;
	});

	return rates;
}

/* The cut sets key on ports: only TCP and UDP connections can be cut. */
function cuttable(flow) {
	var p = (flow && flow.original && flow.original.proto) || (flow && flow.proto);

	return p == 'tcp' || p == 'udp';
}

/*
 * Arguments of ubus `fastpath why` for a flow: its 5-tuple, or for a
 * protocol without ports (ICMP, GRE, ...) its source address.
 */
function whyArgs(flow) {
	var o = (flow && flow.original) || {};

	if (cuttable(flow))
		return { proto: o.proto || flow.proto, src: o.src, dst: o.dst, sport: num(o.sport), dport: num(o.dport) };

	return { address: o.src };
}

/* The connections of a `why` answer that are this flow (by conntrack id), else all of them. */
function whyConnections(res, flow) {
	var all = list(res && res.connections),
	    mine = all.filter(function(a) { return a && a.flow && flow && a.flow.id === flow.id; });

	return mine.length ? mine : all;
}

/* Where a `why` answer says a connection is, in words. */
function whereLabel(where) {
	switch (where) {
	case 'hardware':  return _('offloaded in hardware');
	case 'software':  return _('offloaded in software');
	case 'slow path': return _('slow path: every packet goes through the firewall');
	case 'cut':       return _('cut: its frames are dropped');
	default:          return String(where || '?');
	}
}

/* Arguments of ubus `fastpath cut` for a flow, from its original direction. */
function cutArgs(flow, reason) {
	var o = (flow && flow.original) || {};

	return {
		proto: o.proto || flow.proto,
		src: o.src,
		dst: o.dst,
		sport: num(o.sport),
		dport: num(o.dport),
		reason: String(reason || '').trim() || _('cut from LuCI')
	};
}

/* Arguments of ubus `fastpath uncut` for an active cut. */
function uncutArgs(c) {
	var o = (c && c.original) || {};

	return { proto: o.proto, src: o.src, dst: o.dst, sport: num(o.sport), dport: num(o.dport) };
}

/* Everything an active-cuts table row shows, as text. */
function cutRow(c, nowMs) {
	return {
		original: String((c.original && c.original.proto) || '?').toUpperCase() + ' ' + tuple(c.original),
		reason: c.reason || '',
		trigger: triggerLabel(c.trigger),
		since: age(c.since, nowMs) || '',
		expires: _('in %s').format(duration(Math.ceil(num(c.expires_in_s)))),
		dropped: _('%s frames, %s').format(int(c.frames), bytes(c.bytes)),
		where: c.in_fastpath ? _('fast path') : _('conntrack only')
	};
}

function triggerLabel(trigger) {
	var t = String(trigger || '');

	if (t.indexOf('blocklist:') == 0)
		return _('block list %s').format(t.substring(10));

	switch (t) {
	case 'ubus': return _('ubus / LuCI');
	case 'cli':  return _('command line');
	default:     return t;
	}
}

/*
 * The error of a write call's answer, or null. The daemon answers refused
 * calls with ubus status INVALID_ARGUMENT and {"error": "..."}; LuCI's rpc
 * hands over the body, or the bare status code when there is none.
 */
function callError(res) {
	if (typeof(res) == 'number')
		return res == 0 ? null : _('The fastpath daemon refused the request (ubus status %d).').format(res);

	if (res && typeof(res) == 'object' && res.error)
		return String(res.error);

	return null;
}

/* The overview widget's one line. */
function overviewLine(status) {
	var m = (status && status.mode) || {},
	    f = (status && status.flows) || {},
	    line = modeLabel(m.effective || 'off');

	if (m.requested && m.effective && m.requested != m.effective)
		line += ' ' + _('(%s requested)').format(modeLabel(m.requested).toLowerCase());

	return line + ' \u2014 ' + _('%d of %d flows offloaded, %d in hardware')
		.format(num(f.offloaded), num(f.total), num(f.hw_offloaded));
}

/* The mode fw4's own switches ask for (firewall.@defaults[0]). */
function firewallMode(flowOffloading, flowOffloadingHW) {
	if (flowOffloading != '1')
		return 'off';

	return (flowOffloadingHW == '1') ? 'hardware' : 'software';
}

/* Where a `config blocklist` section reads its addresses, in one line. */
function blocklistSource(b) {
	b = b || {};

	switch (b.type) {
	case 'nftset':
		return _('nftables set %s %s %s').format(b.family || 'inet', b.table || '?', b.set || '?');
	case 'banip':
		return _('every feed set of banIP (inet banIP)');
	case 'crowdsec':
		return _('the CrowdSec bouncer\'s sets (ip crowdsec, ip6 crowdsec6)');
	case 'file':
		return _('file %s').format(b.path || '?');
	case 'list':
		var n = Array.isArray(b.address) ? b.address.length : (b.address ? 1 : 0);
		return N_(n, '%d address listed here', '%d addresses listed here').format(n);
	default:
		return _('unknown type "%s"').format(b.type || '');
	}
}

/* Under a list the daemon sent only the first items of (its answers carry X_total beside a shortened X). */
function more(total, shown) {
	return (num(total) > shown) ? _('… and %d more (%d in all)').format(num(total) - shown, num(total)) : '';
}

/* What a cut did: dropped in the fast path, or (no room in the cut sets, cut_in_fastpath off) only its conntrack entry deleted. */
function cutOutcome(res, what) {
	var only = num(res && res.conntrack_only);

	if (only > 0)
		return _('%s: %d of %d connections were only removed from conntrack, not dropped in the fast path (the cut sets are full: raise the cut set size; or cutting in the fast path is off); a live connection can carry on.')
			.format(what, only, num(res.count));

	return _('Cut %s.').format(what);
}

/* Why a call failed, from the RPCError LuCI's rpc raises: access denied (-32002) or other. */
function callFailure(err) {
	var msg = String((err && err.message) || err || '');

	return { denied: /error -32002\b/.test(msg) || /Access denied/.test(msg), message: msg };
}

/* The sentence for a refused or failed write call: what did not happen, and why. */
function refusal(what, err) {
	var f = callFailure(err);

	return f.denied
		? _('%s: access denied; this login may only read.').format(what)
		: _('%s: %s').format(what, f.message);
}

return baseclass.extend({
	callFailure: callFailure,
	refusal: refusal,
	more: more,
	cutOutcome: cutOutcome,
	list: list,
	shapeStatus: shapeStatus,
	shapeFlows: shapeFlows,
	shapeCuts: shapeCuts,
	shapePlatform: shapePlatform,
	shapeCapabilities: shapeCapabilities,
	modeChoices: modeChoices,
	chip: chip,
	platformOf: platformOf,
	modeLabel: modeLabel,
	modeSentence: modeSentence,
	flowCountsSentence: flowCountsSentence,
	hwFlowsSentences: hwFlowsSentences,
	flowtableState: flowtableState,
	kernelRows: kernelRows,
	tunnelSentence: tunnelSentence,
	kindLabel: kindLabel,
	blocklistLine: blocklistLine,
	cutSummarySentence: cutSummarySentence,
	cutCountsSentence: cutCountsSentence,
	backendLabel: backendLabel,
	bytes: bytes,
	bitrate: bitrate,
	duration: duration,
	age: age,
	endpoint: endpoint,
	tuple: tuple,
	offloadLabel: offloadLabel,
	counters: counters,
	flowRow: flowRow,
	addrKey: addrKey,
	sortFlows: sortFlows,
	filterFlows: filterFlows,
	flowRates: flowRates,
	cuttable: cuttable,
	cutArgs: cutArgs,
	whyArgs: whyArgs,
	whyConnections: whyConnections,
	whereLabel: whereLabel,
	uncutArgs: uncutArgs,
	cutRow: cutRow,
	triggerLabel: triggerLabel,
	callError: callError,
	overviewLine: overviewLine,
	firewallMode: firewallMode,
	blocklistSource: blocklistSource
});
