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

if [[ -x "$dest" ]] && "$dest" --version 2>/dev/null | grep -q "etcd Version: $want"; then
	echo "etcd $want already installed: $dest"
	exit 0
fi

mkdir -p "$bin"
echo "building etcd $want from the Go module proxy (tools/etcd) ..."
tmp="$dest.tmp.$$"
(cd "$root/tools/etcd" && GOWORK=off CGO_ENABLED=0 go build -trimpath -o "$tmp" .)
mv -f "$tmp" "$dest"
"$dest" --version | head -1
echo "etcd $want installed: $dest"
