#!/usr/bin/env bash
# Installs what the SQL helpers' MySQL-dialect tests need (sqltest/): the
# MariaDB server (mariadbd, mariadb-install-db) from Debian's packages. The
# tests start their own throwaway server in a temporary folder on a loopback
# port. Idempotent: does nothing when mariadbd is already installed.
set -euo pipefail

server=""
for c in mariadbd /usr/sbin/mariadbd mysqld /usr/sbin/mysqld; do
	if command -v "$c" >/dev/null 2>&1; then
		server="$(command -v "$c")"
		break
	fi
done

if [ -z "$server" ] || ! command -v mariadb-install-db >/dev/null 2>&1; then
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		sudo="sudo"
	fi
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y mariadb-server
	# The package starts a system service where systemd runs; the tests start
	# their own throwaway server, so stop the system one if it started.
	if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
		$sudo systemctl stop mariadb >/dev/null 2>&1 || true
	fi
	server="$(command -v mariadbd || echo /usr/sbin/mariadbd)"
fi

echo "mariadbd: $server ($("$server" --version))"
