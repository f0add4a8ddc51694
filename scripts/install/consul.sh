#!/usr/bin/env bash
# Installs the Consul agent v1.22.5 used by leasehold's consul tests, if
# missing.
#
# Consul is not in Debian's packages and `go install` of it is refused (its
# go.mod has replace directives), so it is built from the Go module proxy
# through the wrapper module in tools/consul, which names it as a tool
# (go.mod's tool directive). The build is slow cold (about 10 minutes on 2
# cores), so the binary is cached like etcd's.
#
# Destination: ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}/consul
set -euo pipefail

want="1.22.5"
bin="${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dest="$bin/consul"

# The version is read whole, then matched: under pipefail, `consul version |
# grep -q` (or `| head -1`) fails when consul is killed by SIGPIPE after the
# reader closed early (exit 141).
have=""
if [[ -x "$dest" ]]; then
	have="$("$dest" version 2>/dev/null || true)"
fi
if [[ "$have" == "Consul v$want"* ]]; then
	echo "consul $want already installed: $dest"
	exit 0
fi

mkdir -p "$bin"
echo "building consul $want from the Go module proxy (tools/consul; about 10 minutes cold) ..."
tmp="$dest.tmp.$$"
(cd "$root/tools/consul" && GOWORK=off CGO_ENABLED=0 go build -trimpath -o "$tmp" github.com/hashicorp/consul)
mv -f "$tmp" "$dest"
have="$("$dest" version)"
echo "${have%%$'\n'*}"
echo "consul $want installed: $dest"
