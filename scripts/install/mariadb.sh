#!/usr/bin/env bash
# Installs what the SQL helpers' MySQL-dialect tests need (sqltest/): the
# MariaDB server, 10.4 or later (mariadbd, mariadb-install-db), from
# Debian's packages. The
# tests start their own throwaway server in a temporary folder on a loopback
# port. Idempotent: does nothing when mariadbd is already installed.
set -euo pipefail
# shellcheck source=../lib/apt.sh
. "$(dirname "$0")/../lib/apt.sh"

server=""
for c in mariadbd /usr/sbin/mariadbd; do
	if command -v "$c" >/dev/null 2>&1; then
		server="$(command -v "$c")"
		break
	fi
done

if [ -z "$server" ] || ! command -v mariadb-install-db >/dev/null 2>&1; then
	apt_install mariadb-server
	stop_system_services mariadb
	server="$(command -v mariadbd || echo /usr/sbin/mariadbd)"
fi

echo "mariadbd: $server ($("$server" --version))"
