'use strict';
'require view';
'require form';
'require uci';
'require fastpath.format as fmt';

/*
 * Network > Flow Offload > Settings: /etc/config/fastpath, applied with
 * LuCI's Save & Apply (ucitrack restarts fastpath's init script, which
 * reloads the daemon). The requested offload itself stays the firewall's
 * "Routing/NAT offloading" switch; this page shows it and links there.
 */

return view.extend({
	load: function() {
		return Promise.all([
			uci.load('fastpath'),
			uci.load('firewall')
		]);
	},

	render: function() {
		var m, s, o,
		    /* The daemon and `fastpath set` read and write the first fastpath section: edit that one. */
		    first = uci.sections('fastpath', 'fastpath')[0],
		    sid = first ? first['.name'] : 'main';

		m = new form.Map('fastpath', _('Flow Offload'),
			_('How fastpath offloads flows and cuts connections. The offload itself is switched on under Network › Firewall › Routing/NAT Offloading; fastpath makes it truthful for this router\'s chipset.'));

		s = m.section(form.NamedSection, sid, 'fastpath', _('General'));
		/* A missing file means all defaults: offer to create the section then. */
		s.addremove = !first;

		o = s.option(form.Flag, 'enabled', _('Enable fastpath'),
			_('When off, fastpath removes its tables and leaves offloading to the firewall.'));
		o.default = '1';
		o.rmempty = false;

		o = s.option(form.DummyValue, '_firewall', _('Requested by the firewall'),
			_('Change it under Network › Firewall › Routing/NAT Offloading.'));
		o.href = L.url('admin/network/firewall');
		o.cfgvalue = function() {
			return fmt.modeLabel(fmt.firewallMode(
				uci.get_first('firewall', 'defaults', 'flow_offloading'),
				uci.get_first('firewall', 'defaults', 'flow_offloading_hw')));
		};

		o = s.option(form.ListValue, 'hw_offload', _('Hardware offload'),
			_('Follow the firewall: hardware when the firewall\'s hardware switch is on, software where the chipset cannot. Automatic: hardware wherever the chipset can, whatever the firewall asks. Never: software only.'));
		o.value('follow', _('Follow the firewall'));
		o.value('auto', _('Automatic'));
		o.value('off', _('Never'));
		o.default = 'follow';

		o = s.option(form.ListValue, 'sqm_policy', _('With SQM'),
			_('Hardware offload forwards past every qdisc, so SQM stops shaping the offloaded flows. Keep SQM: software offload on a router where SQM shapes a flowtable device. Prefer hardware: hardware offload anyway.'));
		o.value('prefer_sqm', _('Keep SQM shaping'));
		o.value('prefer_hw', _('Prefer hardware offload'));
		o.default = 'prefer_sqm';

		o = s.option(form.DynamicList, 'device', _('Extra flowtable devices'),
			_('Devices to offload besides the ones fastpath finds in the firewall zones and under IPIP tunnels.'));
		o.datatype = 'maxlength(15)';
		o.placeholder = 'eth2';
		o.optional = true;

		o = s.option(form.Value, 'offload_after_packets', _('Offload after packets'),
			_('Packets of each connection (both directions counted) that take the slow path before it is offloaded, for inspectors such as DPI tools that need the first ones. 0: offload at once.'));
		o.datatype = 'range(0,100000)';
		o.placeholder = '0';
		o.default = '0';

		o = s.option(form.Flag, 'recheck_on_rule_change', _('Re-check flows when firewall rules change'),
			_('When a firewall reload really changes the rules a forwarded packet meets (not a reload that renders the same rules, as on every interface change), send every offloaded flow through the firewall once, so the new rules decide; accepted flows are offloaded again. When off, offloaded flows keep running past new rules.'));
		o.default = '1';
		o.rmempty = false;

		o = s.option(form.Flag, 'cut_in_fastpath', _('Cut in the fast path'),
			_('Drop the frames of a cut connection at the device\'s ingress, before the flowtable. When off, a cut only deletes the connection\'s conntrack entry.'));
		o.default = '1';
		o.rmempty = false;

		o = s.option(form.ListValue, 'cut_backend', _('Cut backend'),
			_('Where a device drops the frames of a cut connection. Automatic: native XDP in the network driver, before the kernel allocates anything for the frame, on devices whose driver has it and runs no other XDP program; the netdev ingress table on the others (bridges, VLAN, PPPoE and veth devices). XDP: the same on veths too, and a device that cannot run it is a warning. Netdev: the ingress table on every device. The status page shows which each device runs and why.'));
		o.value('auto', _('Automatic'));
		o.value('xdp', _('XDP where the driver has it'));
		o.value('netdev', _('Netdev ingress table'));
		o.default = 'auto';
		o.depends('cut_in_fastpath', '1');

		o = s.option(form.Flag, 'xdp_forward', _('Forward in the driver (XDP)'),
			_('Established flows of the software flowtable leave in the network driver, in the XDP cut\'s program, before the kernel allocates anything for their frames (Linux 6.11 and later with BTF; not on 32-bit MIPS). First packets, closing TCP packets, fragments and VLAN, PPPoE or tunnel paths take the kernel\'s flowtable as before. Its frames leave past every qdisc, so it is not used where SQM shapes unless the SQM policy prefers hardware offload. The status page says where it runs and why not.'));
		o.default = '0';
		o.depends('cut_in_fastpath', '1');

		o = s.option(form.Value, 'cut_expiry', _('Cut expiry'),
			_('Seconds a cut stays after the last frame of the connection; a sender that keeps sending stays cut.'));
		o.datatype = 'range(1,86400)';
		o.placeholder = '10';
		o.default = '10';

		o = s.option(form.Value, 'cut_set_size', _('Cut set size'),
			_('Most connections cut at once, per address family (one set for IPv4, one for IPv6).'));
		o.datatype = 'range(1,16777216)';
		o.placeholder = '65536';
		o.default = '65536';

		o = s.option(form.Value, 'cut_min_prefix4', _('Shortest IPv4 prefix cut'),
			_('A cut of a wider IPv4 prefix is refused unless forced, and a wider block-list range is reported and not cut, so that no list can cut the router off.'));
		o.datatype = 'range(1,32)';
		o.placeholder = '8';
		o.default = '8';

		o = s.option(form.Value, 'cut_min_prefix6', _('Shortest IPv6 prefix cut'),
			_('The same for IPv6 prefixes.'));
		o.datatype = 'range(1,128)';
		o.placeholder = '16';
		o.default = '16';

		o = s.option(form.ListValue, 'log_level', _('Log level'),
			_('What the daemon writes to the system log (logread).'));
		o.value('debug', _('Debug'));
		o.value('info', _('Info'));
		o.value('warn', _('Warning'));
		o.value('error', _('Error'));
		o.default = 'info';

		s = m.section(form.GridSection, 'blocklist', _('Block lists to watch'),
			_('Connections to or from an address on one of these lists are cut, and new ones are cut as they appear. An nftables set is read as its owner fills it; banIP follows every feed set of banIP (blocklist.v4, cinsscore.v6, ..., not its allowlist), present and future; CrowdSec the firewall bouncer\'s sets; bans that expire are released; a file holds one IP address or CIDR prefix per line, # starting a comment, and is read again when it changes; an address list holds the addresses here.'));
		s.addremove = true;
		s.anonymous = true;
		s.nodescriptions = true;

		o = s.option(form.Flag, 'enabled', _('Enabled'));
		o.default = '1';
		o.editable = true;

		o = s.option(form.Value, 'name', _('Name'));
		o.datatype = 'uciname';
		o.rmempty = false;

		o = s.option(form.ListValue, 'type', _('Type'));
		o.value('nftset', _('nftables set'));
		o.value('banip', _('banIP: every feed set'));
		o.value('crowdsec', _('CrowdSec bouncer\'s sets'));
		o.value('file', _('File'));
		o.value('list', _('Address list'));
		o.default = 'nftset';

		o = s.option(form.DummyValue, '_source', _('Source'));
		o.modalonly = false;
		o.cfgvalue = function(section_id) {
			return fmt.blocklistSource(uci.get('fastpath', section_id));
		};

		o = s.option(form.ListValue, 'family', _('Family'),
			_('Family of the table holding the set, e.g. banIP\'s "inet banIP".'));
		o.value('inet');
		o.value('ip');
		o.value('ip6');
		o.value('bridge');
		o.value('netdev');
		/* arp tables hold no address sets: the daemon refuses family arp. */
		o.default = 'inet';
		o.depends('type', 'nftset');
		o.modalonly = true;

		o = s.option(form.Value, 'table', _('Table'));
		o.datatype = 'string';
		o.placeholder = 'banIP';
		o.depends('type', 'nftset');
		o.modalonly = true;

		o = s.option(form.Value, 'set', _('Set'));
		o.datatype = 'string';
		o.placeholder = 'blocklist.v4';
		o.depends('type', 'nftset');
		o.modalonly = true;

		o = s.option(form.Value, 'path', _('File'),
			_('One address or prefix per line; lines starting with # are comments.'));
		o.datatype = 'string';
		o.placeholder = '/etc/fastpath/blocklist.txt';
		o.depends('type', 'file');
		o.modalonly = true;

		o = s.option(form.DynamicList, 'address', _('Addresses'));
		o.datatype = 'ipaddr';
		o.placeholder = '198.51.100.7';
		o.depends('type', 'list');
		o.modalonly = true;

		return m.render();
	}
});
