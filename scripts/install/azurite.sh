#!/usr/bin/env bash
# Installs Azurite 3.37.0 (the Azure Storage emulator) used by leasehold's
# azblob tests, if missing.
#
# From the npm registry with `npm install --prefix` into a folder under the
# project's cache, then linked as azurite-blob beside the other servers'
# binaries. About 45 s cold. Needs node and npm (Debian's nodejs and npm).
#
# Destination: ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}/azurite-blob
set -euo pipefail

want="3.37.0"
bin="${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}"
prefix="$(dirname "$bin")/azurite-$want"
dest="$bin/azurite-blob"

if [[ -x "$dest" ]] && [[ -x "$prefix/node_modules/.bin/azurite-blob" ]]; then
	echo "azurite $want already installed: $dest"
	exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
	# shellcheck source=../lib/apt.sh
	. "$(dirname "$0")/../lib/apt.sh"
	apt_install nodejs npm
fi

mkdir -p "$bin" "$prefix"
echo "installing azurite $want from the npm registry into $prefix ..."
npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "azurite@$want"
ln -sfn "$prefix/node_modules/.bin/azurite-blob" "$dest"
echo "azurite $want installed: $dest"
