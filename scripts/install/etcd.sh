#!/usr/bin/env bash
# Installs the etcd server v3.7.3 used by leasehold's etcd tests, if missing.
#
# Built from the Go module proxy (go.etcd.io/etcd/server/v3@v3.7.3) through the
# wrapper module in tools/etcd, because `go install` of the server is refused
# (its go.mod has replace directives) and Debian's etcd-server is 3.4.23, older
# than the v3.7.3 client the store is built on. About 90 s cold.
#
# Destination: ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}/etcd
set -euo pipefail

want="3.7.3"
bin="${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dest="$bin/etcd"

# The version is read whole, then matched: under pipefail, `etcd --version |
# grep -q` (or `| head -1`) fails when etcd is killed by SIGPIPE after the
# reader closed early (exit 141).
have=""
if [[ -x "$dest" ]]; then
	have="$("$dest" --version 2>/dev/null || true)"
fi
if [[ "$have" == *"etcd Version: $want"* ]]; then
	echo "etcd $want already installed: $dest"
	exit 0
fi

mkdir -p "$bin"
echo "building etcd $want from the Go module proxy (tools/etcd) ..."
tmp="$dest.tmp.$$"
(cd "$root/tools/etcd" && GOWORK=off CGO_ENABLED=0 go build -trimpath -o "$tmp" .)
mv -f "$tmp" "$dest"
have="$("$dest" --version)"
echo "${have%%$'\n'*}"
echo "etcd $want installed: $dest"
