# Shell functions for scripts/install/*.sh (sourced, not run).

# apt_install PACKAGE... installs Debian packages, with sudo when not root.
# The package lists are refreshed first unless one of these scripts did so
# in the last hour (a stamp file in the temporary folder says when; apt
# gives its lists the server's dates, not the download's).
apt_install() {
	local sudo="" stamp="${TMPDIR:-/tmp}/leasehold-apt-updated"
	if [ "$(id -u)" -ne 0 ]; then
		sudo="sudo"
	fi
	export DEBIAN_FRONTEND=noninteractive
	if [ -z "$(find "$stamp" -mmin -60 2>/dev/null)" ]; then
		$sudo apt-get update -qq
		touch "$stamp"
	fi
	$sudo apt-get install -y "$@"
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
