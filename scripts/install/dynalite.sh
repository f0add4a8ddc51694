#!/usr/bin/env bash
# Installs dynalite 4.0.0 (a DynamoDB-compatible server on LevelDB, in
# memory unless told a path) used by leasehold's dynamodb tests, if missing.
#
# From the npm registry with `npm install --prefix` into a folder under the
# project's cache. About 5 s cold, 10 MB. Needs node and npm (Debian's
# nodejs and npm).
#
# The dynalite beside the other servers' binaries is a launcher of ours, not
# npm's link: dynalite 4.0.0 rethrows a request's 'error' event (index.js:
# req.on('error', function (err) { throw err })), so a client that aborts a
# request mid-flight (a cancelled context, which the conformance suite does
# on purpose) kills the server. The launcher drops exactly that error, an
# aborted request, and lets any other uncaught error end the server as
# before.
#
# Destination: ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}/dynalite
set -euo pipefail

want="4.0.0"
bin="${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}"
prefix="$(dirname "$bin")/dynalite-$want"
dest="$bin/dynalite"
cli="$prefix/node_modules/dynalite/cli.js"

if [[ -x "$dest" ]] && grep -q "leasehold's launcher for dynalite $want" "$dest" && [[ -f "$cli" ]]; then
	echo "dynalite $want already installed: $dest"
	exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
	# shellcheck source=../lib/apt.sh
	. "$(dirname "$0")/../lib/apt.sh"
	apt_install nodejs npm
fi

mkdir -p "$bin" "$prefix"
if [[ ! -f "$cli" ]]; then
	echo "installing dynalite $want from the npm registry into $prefix ..."
	npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "dynalite@$want"
fi
rm -f "$dest" # an earlier install's link into the package: never write through it
cat >"$dest" <<EOF
#!/usr/bin/env node
// leasehold's launcher for dynalite $want (scripts/install/dynalite.sh): a
// client aborting a request must not kill the server.
process.on('uncaughtException', function (err) {
  if (err && err.code === 'ECONNRESET' && err.message === 'aborted') return
  console.error(err)
  process.exit(7)
})
require('$cli')
EOF
chmod +x "$dest"
echo "dynalite $want installed: $dest"
