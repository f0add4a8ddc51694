#!/usr/bin/env bash
# Installs dynalite 4.0.0 (a DynamoDB-compatible server on LevelDB, in
# memory unless told a path) used by leasehold's dynamodb tests, if missing.
#
# From the npm registry with `npm install --prefix` into a folder under the
# project's cache, then linked as dynalite beside the other servers'
# binaries. About 5 s cold, 10 MB. Needs node and npm (Debian's nodejs and
# npm).
#
# Destination: ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}/dynalite
set -euo pipefail

want="4.0.0"
bin="${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}"
prefix="$(dirname "$bin")/dynalite-$want"
dest="$bin/dynalite"

if [[ -x "$dest" ]] && [[ -x "$prefix/node_modules/.bin/dynalite" ]]; then
	echo "dynalite $want already installed: $dest"
	exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
	# shellcheck source=../lib/apt.sh
	. "$(dirname "$0")/../lib/apt.sh"
	apt_install nodejs npm
fi

mkdir -p "$bin" "$prefix"
echo "installing dynalite $want from the npm registry into $prefix ..."
npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "dynalite@$want"
ln -sfn "$prefix/node_modules/.bin/dynalite" "$dest"
echo "dynalite $want installed: $dest"
