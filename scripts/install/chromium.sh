#!/usr/bin/env bash
# Installs Chromium, the browser serve/browsertest drives headless (through
# chromedp) to test leasehold serve's dashboard as a person sees it, from
# Debian's packages. Idempotent: does nothing when chromium is already on
# PATH. A failed install fails here, and the browser test then fails too
# (it never skips).
set -euo pipefail
# shellcheck source=../lib/apt.sh
. "$(dirname "$0")/../lib/apt.sh"

if ! command -v chromium >/dev/null 2>&1; then
	apt_install chromium
fi
tool="$(command -v chromium)"
version="$("$tool" --version 2>/dev/null || true)"
echo "chromium: $tool (${version:-version unknown})"
