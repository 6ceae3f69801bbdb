'use strict';
'require baseclass';
'require rpc';
'require fastpath.format as fmt';

/* Status > Overview: one line, the running offload mode and flow counts. */

/* No `expect`: a login without our ACL gets ubus status 6, and then the line is left out. */
var callStatus = rpc.declare({
	object: 'fastpath',
	method: 'status'
});

var UBUS_STATUS_PERMISSION_DENIED = 6;

return baseclass.extend({
	title: _('Flow offload'),

	load: function() {
		return L.resolveDefault(callStatus(), {});
	},

	render: function(st) {
		if (st === UBUS_STATUS_PERMISSION_DENIED)
			return null;

		var status = fmt.shapeStatus(st);

		if (!status)
			return E('p', {}, E('em', {}, _('The fastpath daemon does not answer.')));

		return E('p', {}, [
			fmt.overviewLine(status), ' (',
			E('a', { 'href': L.url('admin/network/fastpath') }, _('details')), ')'
		]);
	}
});
