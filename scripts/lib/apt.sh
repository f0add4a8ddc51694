# shellcheck shell=bash
# Shell functions for scripts/install/*.sh (sourced, not run).

# apt_install PACKAGE... installs Debian packages, with sudo when not root.
# The package lists are refreshed first unless one of these scripts did so,
# as this user, in the last hour (a stamp file in the temporary folder says
# when; apt gives its lists the server's dates, not the download's). A
# failed refresh is not stamped.
apt_install() {
	local sudo="" stamp
	stamp="${TMPDIR:-/tmp}/leasehold-apt-updated-$(id -u)"
	if [ "$(id -u)" -ne 0 ]; then
		sudo="sudo"
	fi
	if [ -z "$(find "$stamp" -mmin -60 2>/dev/null)" ]; then
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq || return
		touch "$stamp" 2>/dev/null || true
	fi
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@"
}

# stop_system_services UNIT... stops the services that packages start where
# systemd runs: the tests start their own throwaway servers.
stop_system_services() {
	local sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		sudo="sudo"
	fi
	if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
		$sudo systemctl stop "$@" >/dev/null 2>&1 || true
	fi
}
