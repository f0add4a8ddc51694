#!/usr/bin/env bash
# Installs the Kubernetes API server v1.37.2 used by leasehold's kube tests,
# if missing.
#
# kube-apiserver has no Debian package, and `go install` of it is refused
# (k8s.io/kubernetes' go.mod replaces its staging modules with local paths),
# so it is built from the Go module proxy through the wrapper module in
# tools/kube-apiserver, which maps each staging module to its published
# k8s.io/X v0.37.2. The version is stamped with -ldflags -X (otherwise the
# binary calls itself v0.0.0-master). The build is slow cold (about 16 minutes
# of CPU on 2 cores, ~950 MB of module cache, a 163 MB binary), so it runs
# under `nice -n 19` to take only idle CPU, and the binary is cached like
# etcd's and Consul's.
#
# Destination: ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}/kube-apiserver
set -euo pipefail

want="1.37.2"
bin="${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dest="$bin/kube-apiserver"

# The version is read whole, then matched: under pipefail, a pipe into
# `grep -q` (or `head -1`) fails when the binary is killed by SIGPIPE after
# the reader closed early (exit 141).
have=""
if [[ -x "$dest" ]]; then
	have="$("$dest" --version 2>/dev/null || true)"
fi
if [[ "$have" == "Kubernetes v$want" ]]; then
	echo "kube-apiserver $want already installed: $dest"
	exit 0
fi

# The version variables that Kubernetes' own build (hack/lib/version.sh)
# stamps, in both packages that report a version.
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $pkg.gitVersion=v$want"
	ldflags+=" -X $pkg.gitMajor=${want%%.*}"
	minor="${want#*.}"
	ldflags+=" -X $pkg.gitMinor=${minor%%.*}"
	ldflags+=" -X $pkg.gitTreeState=clean"
done

mkdir -p "$bin"
echo "building kube-apiserver $want from the Go module proxy (tools/kube-apiserver; about 16 minutes cold) ..."
tmp="$dest.tmp.$$"
trap 'rm -f "$tmp"' EXIT
(cd "$root/tools/kube-apiserver" &&
	GOWORK=off CGO_ENABLED=0 nice -n 19 go build -trimpath -ldflags "$ldflags" -o "$tmp" .)
mv -f "$tmp" "$dest"
have="$("$dest" --version)"
echo "$have"
if [[ "$have" != "Kubernetes v$want" ]]; then
	echo "kube-apiserver: built $dest reports '$have', want 'Kubernetes v$want'" >&2
	exit 1
fi
echo "kube-apiserver $want installed: $dest"
