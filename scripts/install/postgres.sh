#!/usr/bin/env bash
# Installs what the postgres store's tests and benchmarks need: the PostgreSQL
# server binaries (initdb, pg_ctl, postgres) and PgBouncer (for the transaction
# pooling test). Idempotent: does nothing when both are present.
set -euo pipefail
# shellcheck source=../lib/apt.sh
. "$(dirname "$0")/../lib/apt.sh"

pgbin=""
for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
	if [ -x "$d/initdb" ] && [ -x "$d/postgres" ]; then
		pgbin="$d"
		break
	fi
done

need=()
if [ -z "$pgbin" ] && ! command -v initdb >/dev/null 2>&1; then
	need+=(postgresql)
fi
if ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ]; then
	need+=(pgbouncer)
fi

if [ "${#need[@]}" -gt 0 ]; then
	apt_install "${need[@]}"
	stop_system_services pgbouncer postgresql
	for d in /usr/lib/postgresql/*/bin; do
		if [ -x "$d/initdb" ]; then
			pgbin="$d"
		fi
	done
fi

if [ -z "$pgbin" ]; then
	pgbin="$(dirname "$(command -v initdb)")"
fi
echo "postgresql: $pgbin ($("$pgbin/postgres" --version))"
bouncer="$(command -v pgbouncer || echo /usr/sbin/pgbouncer)"
version="$("$bouncer" --version || true)" # whole: a pipe into head can end in SIGPIPE
echo "pgbouncer: $bouncer (${version%%$'\n'*})"
