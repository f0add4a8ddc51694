#!/usr/bin/env bash
# Installs what the fault harness's network lab (faults/netlab) needs: nft
# (nftables) for the cuts between a cluster's members, ip (iproute2) for
# the namespaces, bridge and veths, and unshare (util-linux) for the run's
# private network namespace, from Debian's packages. The lab changes nothing
# on the host's network: it lives in the run's own namespace. Idempotent:
# does nothing when the three are there.
set -euo pipefail
# shellcheck source=../lib/apt.sh
. "$(dirname "$0")/../lib/apt.sh"

pkgs=()
command -v nft >/dev/null 2>&1 || pkgs+=(nftables)
command -v ip >/dev/null 2>&1 || pkgs+=(iproute2)
command -v unshare >/dev/null 2>&1 || pkgs+=(util-linux)
if [ ${#pkgs[@]} -gt 0 ]; then
	apt_install "${pkgs[@]}"
	stop_system_services nftables
fi

nft="$(nft --version 2>&1 || true)"
echo "nftables: $(command -v nft) (${nft%%$'\n'*}); $(command -v ip); $(command -v unshare)"
