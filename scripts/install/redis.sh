#!/usr/bin/env bash
# Installs what the redis and redlock stores' tests and benchmarks need:
# redis-server and redis-cli from Debian's packages. Idempotent: does nothing
# when redis-server is already on PATH or in ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}.
set -euo pipefail

bindir="${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}"
server=""
if [ -x "$bindir/redis-server" ]; then
	server="$bindir/redis-server"
elif command -v redis-server >/dev/null 2>&1; then
	server="$(command -v redis-server)"
fi

if [ -z "$server" ]; then
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		sudo="sudo"
	fi
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y redis-server
	# The package starts a system service where systemd runs; the tests start
	# their own throwaway servers, so stop the system one if it started.
	if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
		$sudo systemctl stop redis-server >/dev/null 2>&1 || true
	fi
	server="$(command -v redis-server)"
fi

echo "redis-server: $server ($("$server" --version))"
