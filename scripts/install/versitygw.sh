#!/usr/bin/env bash
# Installs the Versity S3 gateway (versitygw) v1.8.0 used by leasehold's s3
# tests, if missing.
#
# versitygw serves the S3 API over a local folder (its posix backend) and
# honours the conditional writes the s3 store relies on (If-None-Match: *,
# If-Match on PUT). Built with `go install` from the Go module proxy into a
# temporary GOBIN, then moved beside the other servers' binaries. About 90 s
# cold.
#
# Destination: ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}/versitygw
set -euo pipefail

want="1.8.0"
bin="${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}"
dest="$bin/versitygw"

# The version is read whole, then matched (a pipe into grep -q can fail with
# SIGPIPE under pipefail).
have=""
if [[ -x "$dest" ]]; then
	have="$("$dest" --version 2>/dev/null || true)"
fi
if [[ "$have" == *"v$want"* ]]; then
	echo "versitygw $want already installed: $dest"
	exit 0
fi

mkdir -p "$bin"
echo "building versitygw $want from the Go module proxy (about 90 s cold) ..."
gobin="$(mktemp -d "$bin/.versitygw.XXXXXX")"
trap 'rm -rf "$gobin"' EXIT
GOWORK=off GOBIN="$gobin" CGO_ENABLED=0 go install -trimpath \
	-ldflags "-X main.Version=v$want" "github.com/versity/versitygw/cmd/versitygw@v$want"
mv -f "$gobin/versitygw" "$dest"
have="$("$dest" --version)"
echo "${have%%$'\n'*}"
echo "versitygw $want installed: $dest"
