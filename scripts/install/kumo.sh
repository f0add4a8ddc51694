#!/usr/bin/env bash
# Installs kumo v0.33.1, a second DynamoDB-compatible server (Go, in memory),
# on which leasehold's dynamodb tests cross-check the store's conformance
# against dynalite's (dynamodb/kumo_test.go), if missing.
#
# `go install` from the Go module proxy, about 5 minutes cold on 2 cores.
# Some of the AWS SDK service modules kumo requires (amplify, appmesh, ...)
# are served by the proxy here but have no entry in the checksum database it
# mirrors (404), so those modules, and only those (GONOSUMDB's prefix
# github.com/aws/aws-sdk-go-v2), are taken without the database's check; the
# proxy's own copy is what every other module trusts too. The version is read
# back from the binary's build information (`go version -m`).
#
# Destination: ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}/kumo
set -euo pipefail

want="v0.33.1"
bin="${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}"
dest="$bin/kumo"

have=""
if [[ -x "$dest" ]]; then
	have="$(go version -m "$dest" 2>/dev/null || true)"
fi
if [[ "$have" == *$'\tmod\tgithub.com/sivchari/kumo\t'"$want"* ]]; then
	echo "kumo $want already installed: $dest"
	exit 0
fi

mkdir -p "$bin"
echo "building kumo $want from the Go module proxy (about 5 minutes cold) ..."
tmp="$(mktemp -d "$bin/kumo.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
GOWORK=off GOFLAGS=-mod=mod GOBIN="$tmp" GONOSUMDB=github.com/aws/aws-sdk-go-v2 CGO_ENABLED=0 \
	nice -n 19 go install -trimpath -ldflags "-s -w" "github.com/sivchari/kumo/cmd/kumo@$want"
mv -f "$tmp/kumo" "$dest"
have="$(go version -m "$dest")"
if [[ "$have" != *$'\tmod\tgithub.com/sivchari/kumo\t'"$want"* ]]; then
	echo "kumo: built $dest is not github.com/sivchari/kumo $want" >&2
	exit 1
fi
echo "kumo $want installed: $dest"
