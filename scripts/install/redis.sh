#!/usr/bin/env bash
# Installs what the redis and redlock stores' tests and benchmarks need:
# redis-server and redis-cli from Debian's packages. Idempotent: does nothing
# when redis-server is already on PATH or in ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}.
set -euo pipefail
# shellcheck source=../lib/apt.sh
. "$(dirname "$0")/../lib/apt.sh"

bindir="${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}"
server=""
if [ -x "$bindir/redis-server" ]; then
	server="$bindir/redis-server"
elif command -v redis-server >/dev/null 2>&1; then
	server="$(command -v redis-server)"
fi

if [ -z "$server" ]; then
	apt_install redis-server
	stop_system_services redis-server
	server="$(command -v redis-server)"
fi

echo "redis-server: $server ($("$server" --version))"
