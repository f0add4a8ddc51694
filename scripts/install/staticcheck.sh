#!/usr/bin/env bash
# Installs staticcheck v0.8.2 (honnef.co/go/tools), the Go linter the suite
# runs in every module (scripts/staticcheck), if missing.
#
# Built with `go install` from the Go module proxy into a temporary GOBIN,
# then moved beside the servers' binaries. About a minute cold.
#
# Destination: ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}/staticcheck
set -euo pipefail

want="0.8.2"
bin="${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}"
dest="$bin/staticcheck"

# The version is read whole, then matched (a pipe into grep -q can die of
# SIGPIPE under pipefail). It reads "staticcheck 2026.2.2 (0.8.2)".
have=""
if [[ -x "$dest" ]]; then
	have="$("$dest" -version 2>/dev/null || true)"
fi
if [[ "$have" == *"($want)"* || "$have" == *"(v$want)"* ]]; then
	echo "staticcheck $want already installed: $dest"
	exit 0
fi

mkdir -p "$bin"
echo "building staticcheck $want from the Go module proxy ..."
gobin="$(mktemp -d "$bin/.staticcheck.XXXXXX")"
trap 'rm -rf "$gobin"' EXIT
GOWORK=off GOBIN="$gobin" CGO_ENABLED=0 go install -trimpath "honnef.co/go/tools/cmd/staticcheck@v$want"
mv -f "$gobin/staticcheck" "$dest"
have="$("$dest" -version)"
echo "${have%%$'\n'*}"
echo "staticcheck $want installed: $dest"
