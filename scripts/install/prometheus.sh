#!/usr/bin/env bash
# Installs what the command's metrics tests need: promtool (check metrics,
# check rules), from Debian's prometheus package. Idempotent: does nothing
# when promtool is already on PATH or in ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}.
set -euo pipefail
# shellcheck source=../lib/apt.sh
. "$(dirname "$0")/../lib/apt.sh"

bindir="${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}"
tool=""
if [ -x "$bindir/promtool" ]; then
	tool="$bindir/promtool"
elif command -v promtool >/dev/null 2>&1; then
	tool="$(command -v promtool)"
fi

if [ -z "$tool" ]; then
	apt_install --no-install-recommends prometheus
	# The package starts a Prometheus server (and, with its recommends, a
	# node exporter) where systemd runs: the tests need only promtool.
	stop_system_services prometheus prometheus-node-exporter
	tool="$(command -v promtool)"
fi

version="$("$tool" --version 2>&1 || true)" # whole: a pipe into head can end in SIGPIPE
echo "promtool: $tool (${version%%$'\n'*})"
