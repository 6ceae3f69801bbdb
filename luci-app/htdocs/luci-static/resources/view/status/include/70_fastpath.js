'use strict';
'require baseclass';
'require rpc';
'require fastpath.format as fmt';

/* Status > Overview: one line, the running offload mode and flow counts. */

/*
 * No `expect`: the raw answer, or the RPCError LuCI's rpc raises. uhttpd
 * answers a session without our ACL with JSON-RPC error -32002 (Access
 * denied) and a daemon that is not registered with -32000 (Object not found).
 */
var callStatus = rpc.declare({
	object: 'fastpath',
	method: 'status'
});

return baseclass.extend({
	title: _('Flow offload'),

	load: function() {
		return callStatus().catch(function(err) {
			var msg = String((err && err.message) || err || '');

			return { denied: /error -32002\b/.test(msg) || /Access denied/.test(msg) };
		});
	},

	render: function(st) {
		if (st && st.denied === true)
			return E('p', {}, [ E('em', {}, [ _('Access denied: this login may not read fastpath\'s status.') ]) ]);

		var status = fmt.shapeStatus(st);

		if (!status)
			return E('p', {}, [ E('em', {}, [ _('The fastpath daemon does not answer.') ]) ]);

		return E('p', {}, [
			fmt.overviewLine(status), ' (',
			E('a', { 'href': L.url('admin/network/fastpath') }, [ _('details') ]), ')'
		]);
	}
});
