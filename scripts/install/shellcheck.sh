#!/usr/bin/env bash
# Installs ShellCheck, the shell script linter the suite runs over scripts/
# and .ci/ (scripts/test's shellcheck step), from Debian's packages.
# Idempotent: does nothing when shellcheck is already on PATH or in
# ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}.
set -euo pipefail
# shellcheck source=../lib/apt.sh
. "$(dirname "$0")/../lib/apt.sh"

bindir="${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}"
tool=""
if [ -x "$bindir/shellcheck" ]; then
	tool="$bindir/shellcheck"
elif command -v shellcheck >/dev/null 2>&1; then
	tool="$(command -v shellcheck)"
fi

if [ -z "$tool" ]; then
	apt_install shellcheck
	tool="$(command -v shellcheck)"
fi

version="$("$tool" --version)"
version="${version#*version: }"
echo "shellcheck: $tool (${version%%$'\n'*})"
