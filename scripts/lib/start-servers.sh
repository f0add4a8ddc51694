# shellcheck shell=bash
# start_servers for scripts/bench-page (sourced, not run; scripts/check-scripts
# tests it against a fake servers command).

# start_servers LOG COMMAND [ARG...] starts COMMAND (the servers command,
# internal/testserver/cmd/servers) as a coprocess, its standard error into
# LOG and its standard input this shell's end of a pipe (which, closing when
# the shell exits, stops the servers); reads the NAME_KEY=value lines it
# prints into the caller's associative array SRV until READY; and calls the
# caller's miss for each NAME_ERROR line (a server that did not start) and
# when the command ended before READY. It sets srvpid, the command's pid.
#
# Bash unsets the coprocess's array (SERVERS) and pid (SERVERS_PID) once it
# reaps it, and under set -u their next use after an early exit of the
# command would end the script ("SERVERS[0]: unbound variable") before its
# miss. So the coprocess waits for a line on its standard input (read takes
# that line only) while the shell copies its descriptors and pid, and only
# then runs the command; the lines are read from the copy.
# shellcheck disable=SC2034 # srvpid and SRV are the caller's
start_servers() {
	local log="$1" srv srvin key value ready=no
	shift
	coproc SERVERS { read -r _ && exec "$@" 2>"$log"; }
	exec {srv}<&"${SERVERS[0]}" {srvin}>&"${SERVERS[1]}"
	srvpid=$SERVERS_PID
	echo go >&"$srvin"
	while IFS='=' read -r -u "$srv" key value; do
		if [[ "$key" == READY ]]; then
			ready=yes
			break
		fi
		SRV["$key"]=$value
		if [[ "$key" == *_ERROR ]]; then
			miss "${key%_ERROR}: the server did not start: $value"
		fi
	done
	exec {srv}<&-
	if [[ "$ready" != yes ]]; then
		miss "servers: the servers command ended before its servers were up: $(tail -1 "$log" 2>/dev/null)"
	fi
}
