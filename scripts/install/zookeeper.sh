#!/usr/bin/env bash
# Installs what the zookeeper store's tests and benchmarks need: Apache
# ZooKeeper 3.8 and a Java runtime from Debian's packages (the server runs as
# `java -cp /usr/share/java/zookeeper.jar ...`). The tests start their own
# throwaway servers (a standalone one, or an ensemble) on loopback ports in
# temporary folders. Idempotent: does nothing when the jar and java are there.
set -euo pipefail
# shellcheck source=../lib/apt.sh
. "$(dirname "$0")/../lib/apt.sh"

jar=/usr/share/java/zookeeper.jar
if [ ! -f "$jar" ] || ! command -v java >/dev/null 2>&1; then
	apt_install zookeeper
	stop_system_services zookeeper
fi

java="$(java -version 2>&1 || true)" # whole: a pipe into head can end in SIGPIPE
echo "zookeeper: $jar ($(dpkg-query -W -f '${Version}' zookeeper 2>/dev/null || echo "not from a package")); ${java%%$'\n'*}"
