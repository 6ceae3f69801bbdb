'use strict';
'require baseclass';
'require ui';
'require fastpath.format as fmt';

/*
 * The page pieces the status and flows views share: table cells and
 * tables, notes and notifications, the confirmation dialog.
 *
 * LuCI's dom.append puts a lone string child in with innerHTML, so every
 * text goes in as [ text ]: daemon, flow, cut and reason text is never
 * markup.
 */

/* A table cell; children is one child or a list of them. */
function cell(title, children) {
	return E('td', { 'class': 'td', 'data-title': title }, Array.isArray(children) ? children : [ children ]);
}

/* A row of cells under titles, with extra cells (actions) after them. */
function row(titles, cells, extra) {
	return E('tr', { 'class': 'tr cbi-section-table-row' }, cells.map(function(c, i) {
		return cell(titles[i], c);
	}).concat(extra || []));
}

/*
 * A section table: heads are titles or ready <th> elements, rows are
 * <tr> elements; with no row, one placeholder row says empty.
 */
function table(heads, rows, empty) {
	return E('table', { 'class': 'table cbi-section-table' }, [
		E('tr', { 'class': 'tr table-titles' }, heads.map(function(h) {
			return (typeof h == 'string') ? E('th', { 'class': 'th' }, [ h ]) : h;
		}))
	].concat(rows.length ? rows : [
		E('tr', { 'class': 'tr placeholder' }, [ E('td', { 'class': 'td', 'colspan': String(heads.length) }, [ E('em', {}, [ empty ]) ]) ])
	]));
}

function note(cls, text) {
	return E('div', { 'class': 'alert-message ' + cls }, [ text ]);
}

/* One line in LuCI's notification area; level is info, warning or danger. */
function notify(text, level) {
	ui.addNotification(null, E('p', {}, [ text ]), level);
}

/* A refused or failed write call, as LuCI's rpc raises it. */
function refused(what, err) {
	notify(fmt.refusal(what, err), 'danger');
}

/* Write actions only for sessions that may write (rpcd grants set, reload, cut and uncut with write). */
function writable() {
	return L.hasViewPermission() === true;
}

/*
 * A modal dialog of body with Cancel and a confirm button (label, its
 * cbi-button class, its id); resolves with what action returns, or with
 * nothing on Cancel.
 */
function confirm(title, body, label, cls, id, action) {
	return new Promise(function(resolve) {
		ui.showModal(title, body.concat([
			E('div', { 'class': 'right' }, [
				E('button', { 'class': 'cbi-button', 'click': function() { ui.hideModal(); resolve(); } }, [ _('Cancel') ]), ' ',
				E('button', {
					'class': 'cbi-button ' + cls + ' important',
					'id': id,
					'click': function() {
						ui.hideModal();
						resolve(action());
					}
				}, [ label ])
			])
		]));
	});
}

return baseclass.extend({
	cell: cell,
	row: row,
	table: table,
	note: note,
	notify: notify,
	refused: refused,
	writable: writable,
	confirm: confirm
});
