# Stand-in for OpenWrt's /lib/functions/procd.sh (install test): every
# procd_* call is recorded; closing the service collects its triggers, as
# procd.sh does. Sourced by rc.common.
# shellcheck shell=sh

procd_open_service() { record "procd_open_service $*"; }
procd_close_service() {
	service_triggers
	record "procd_close_service $*"
}
procd_open_instance() { record "procd_open_instance $*"; }
procd_close_instance() { record "procd_close_instance $*"; }
procd_set_param() { record "procd_set_param $*"; }
procd_add_reload_trigger() { record "procd_add_reload_trigger $*"; }
procd_send_signal() { record "procd_send_signal $*"; }
# The service runs while /tmp/procd-running exists; stopping one that does
# not run makes ubus print procd's answer, as on a router.
procd_running() {
	record "procd_running $*"
	[ -f "${IPKG_INSTROOT}/tmp/procd-running" ]
}
procd_kill() {
	record "procd_kill $*"
	if [ ! -f "${IPKG_INSTROOT}/tmp/procd-running" ]; then
		echo "Command failed: ubus call service delete {\"name\":\"$1\"} (Not found)" >&2
		return 4
	fi
	rm -f "${IPKG_INSTROOT}/tmp/procd-running"
}
