# shellcheck shell=bash
# Throwaway servers on loopback ports for scripts (scripts/bench-page).
#
# Source this file, then:
#
#   srv_init DIR                 servers keep their data and logs under DIR
#   trap srv_stop_all EXIT       (the caller sets the trap)
#   srv_redis NAME               one redis-server, no persistence
#   srv_postgres NAME            one PostgreSQL server, fsync off
#   srv_etcd NAME N              an etcd cluster of N members, --unsafe-no-fsync
#   srv_zookeeper NAME N         a ZooKeeper ensemble of N servers, forceSync=no
#   srv_consul NAME              a Consul dev agent (its Raft log in memory),
#                                4096 HTTP connections per client address
#   srv_azurite NAME             Azurite's blob service, in memory
#   srv_versitygw NAME BUCKET    versitygw over a folder, with BUCKET made
#   srv_stop_all                 stops every server started, in reverse order
#
# After a start, SRV_ADDR[NAME] holds the address (host:port, or for etcd a
# comma-separated list of client addresses) and SRV_PIDS[NAME] the server
# process ids (space-separated); for Azurite and versitygw, SRV_ADDR is the
# endpoint URL. Each server runs in its own session, so it
# survives nothing: srv_stop_all signals it and, after a grace, kills it.
# Binaries are looked up in ${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}, then
# PATH (and /usr/lib/postgresql/*/bin); a missing one is an error naming the
# install script to run.

declare -gA SRV_ADDR=()
declare -gA SRV_PIDS=()
declare -ga SRV_ORDER=()
declare -g SRV_DIR=""

# srv_init DIR: where servers keep their data.
srv_init() {
	SRV_DIR="$1"
	mkdir -p "$SRV_DIR"
	# PostgreSQL runs as the postgres user when we are root: every parent
	# of its folder must be enterable.
	chmod 755 "$SRV_DIR"
	# (and every parent of DIR must be enterable by it: not a 0700 mktemp -d)
}

# srv_log MESSAGE: progress on stderr.
srv_log() { echo "servers: $*" >&2; }

# srv_bin NAME INSTALL_SCRIPT: the path of a server binary.
srv_bin() {
	local name="$1" script="$2" d
	local bindir="${LEASEHOLD_BIN:-$HOME/.cache/leasehold/bin}"
	if [[ -x "$bindir/$name" ]]; then
		echo "$bindir/$name"
		return 0
	fi
	if command -v "$name" >/dev/null 2>&1; then
		command -v "$name"
		return 0
	fi
	for d in /usr/lib/postgresql/*/bin; do
		if [[ -x "$d/$name" ]]; then
			echo "$d/$name"
			return 0
		fi
	done
	echo "servers: $name not found in $bindir or PATH: run $script" >&2
	return 1
}

# srv_free_port: a TCP port on 127.0.0.1 that nothing listens on.
srv_free_port() {
	if command -v python3 >/dev/null 2>&1; then
		python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
		return
	fi
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

# srv_wait WHAT SECONDS CMD...: polls CMD until it succeeds.
srv_wait() {
	local what="$1" secs="$2"
	shift 2
	local deadline=$((SECONDS + secs))
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			echo "servers: $what not ready after ${secs}s" >&2
			return 1
		fi
		sleep 0.05
	done
}

# srv_spawn LOG CMD...: starts CMD in its own session, echoes its pid.
srv_spawn() {
	local log="$1"
	shift
	setsid "$@" >>"$log" 2>&1 </dev/null &
	echo $!
}

srv_redis() {
	local name="$1" bin cli port dir pid
	bin=$(srv_bin redis-server scripts/install/redis.sh) || return 1
	cli=$(srv_bin redis-cli scripts/install/redis.sh) || return 1
	port=$(srv_free_port)
	dir="$SRV_DIR/$name"
	mkdir -p "$dir"
	pid=$(srv_spawn "$dir/stdout.log" "$bin" --bind 127.0.0.1 --port "$port" --dir "$dir" \
		--save '' --appendonly no --daemonize no --logfile "$dir/redis.log")
	SRV_PIDS[$name]=$pid
	SRV_ORDER+=("$name")
	if ! srv_wait "redis $name" 15 bash -c "[[ \$('$cli' -p $port ping) == PONG ]]"; then
		tail -5 "$dir/redis.log" >&2 || true
		return 1
	fi
	SRV_ADDR[$name]="127.0.0.1:$port"
	srv_log "redis $name on ${SRV_ADDR[$name]} (pid $pid)"
}

srv_postgres() {
	local name="$1" initdb pgctl port dir run=() pid
	initdb=$(srv_bin initdb scripts/install/postgres.sh) || return 1
	pgctl=$(srv_bin pg_ctl scripts/install/postgres.sh) || return 1
	port=$(srv_free_port)
	dir="$SRV_DIR/$name"
	mkdir -p "$dir"
	if [[ $(id -u) -eq 0 ]]; then
		chown postgres: "$dir"
		run=(runuser -u postgres --)
	fi
	"${run[@]}" "$initdb" -D "$dir/data" -U postgres -A trust --no-sync >"$dir/initdb.log" 2>&1 || {
		tail -5 "$dir/initdb.log" >&2
		return 1
	}
	SRV_ORDER+=("$name")
	SRV_PIDS[$name]="pg:$dir/data"
	"${run[@]}" "$pgctl" -D "$dir/data" -l "$dir/pg.log" -w -t 30 \
		-o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400" \
		start >/dev/null || {
		tail -5 "$dir/pg.log" >&2
		return 1
	}
	pid=$(head -1 "$dir/data/postmaster.pid")
	SRV_PIDS[$name]=$pid
	SRV_ADDR[$name]="127.0.0.1:$port"
	srv_log "postgres $name on ${SRV_ADDR[$name]} (pid $pid)"
}

srv_etcd() {
	local name="$1" n="$2" bin i dir token initial="" cport=() pport=() pids=() addrs=()
	bin=$(srv_bin etcd scripts/install/etcd.sh) || return 1
	token="$name-$$-$RANDOM"
	for ((i = 1; i <= n; i++)); do
		cport[i]=$(srv_free_port)
		pport[i]=$(srv_free_port)
		initial+="${initial:+,}$name-$i=http://127.0.0.1:${pport[i]}"
	done
	SRV_ORDER+=("$name")
	for ((i = 1; i <= n; i++)); do
		dir="$SRV_DIR/$name/$i"
		mkdir -p "$dir"
		pids+=("$(srv_spawn "$dir/etcd.log" "$bin" --name "$name-$i" --data-dir "$dir/data" \
			--listen-client-urls "http://127.0.0.1:${cport[i]}" --advertise-client-urls "http://127.0.0.1:${cport[i]}" \
			--listen-peer-urls "http://127.0.0.1:${pport[i]}" --initial-advertise-peer-urls "http://127.0.0.1:${pport[i]}" \
			--initial-cluster "$initial" --initial-cluster-state new --initial-cluster-token "$token" \
			--unsafe-no-fsync --log-level warn)")
		addrs+=("127.0.0.1:${cport[i]}")
		SRV_PIDS[$name]="${pids[*]}"
	done
	for a in "${addrs[@]}"; do
		if ! srv_wait "etcd $name ($a)" 30 bash -c "[[ \$(curl -fsS http://$a/health) == *'\"health\":\"true\"'* ]]"; then
			tail -5 "$SRV_DIR/$name"/*/etcd.log >&2 || true
			return 1
		fi
	done
	SRV_ADDR[$name]=$(
		IFS=,
		echo "${addrs[*]}"
	)
	srv_log "etcd $name: $n members on ${SRV_ADDR[$name]} (pids ${pids[*]})"
}

# srv_ask ADDR WORD: one of ZooKeeper's four-letter commands, its answer on
# stdout.
srv_ask() {
	local host="${1%:*}" port="${1##*:}"
	exec 3<>"/dev/tcp/$host/$port" || return 1
	printf '%s' "$2" >&3
	timeout 5 cat <&3
	exec 3<&-
}

srv_zookeeper() {
	local name="$1" n="$2" java jar i dir servers="" pids=() addrs=() cport=() q1=() q2=()
	java=$(srv_bin java scripts/install/zookeeper.sh) || return 1
	jar="${LEASEHOLD_ZOOKEEPER_JAR:-/usr/share/java/zookeeper.jar}"
	if [[ ! -f "$jar" ]]; then
		echo "servers: $jar not found: run scripts/install/zookeeper.sh" >&2
		return 1
	fi
	for ((i = 1; i <= n; i++)); do
		cport[i]=$(srv_free_port)
		q1[i]=$(srv_free_port)
		q2[i]=$(srv_free_port)
		if ((n > 1)); then
			servers+="server.$i=127.0.0.1:${q1[i]}:${q2[i]}"$'\n'
		fi
	done
	SRV_ORDER+=("$name")
	for ((i = 1; i <= n; i++)); do
		dir="$SRV_DIR/$name/$i"
		mkdir -p "$dir"
		echo "$i" >"$dir/myid"
		cat >"$dir/zoo.cfg" <<-CFG
			tickTime=100
			initLimit=10
			syncLimit=5
			dataDir=$dir
			clientPort=${cport[i]}
			clientPortAddress=127.0.0.1
			minSessionTimeout=200
			maxSessionTimeout=300000
			4lw.commands.whitelist=srvr,ruok
			admin.enableServer=false
			maxClientCnxns=0
			forceSync=no
			${servers}
		CFG
		pids+=("$(srv_spawn "$dir/zookeeper.log" "$java" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
			-Dzookeeper.admin.enableServer=false -cp "$jar" org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg")")
		addrs+=("127.0.0.1:${cport[i]}")
		SRV_PIDS[$name]="${pids[*]}"
	done
	for a in "${addrs[@]}"; do
		if ! srv_wait "zookeeper $name ($a)" 60 bash -c "$(declare -f srv_ask); [[ \$(srv_ask $a srvr) == *'Mode: '* ]]"; then
			tail -5 "$SRV_DIR/$name"/*/zookeeper.log >&2 || true
			return 1
		fi
	done
	SRV_ADDR[$name]=$(
		IFS=,
		echo "${addrs[*]}"
	)
	srv_log "zookeeper $name: $n servers on ${SRV_ADDR[$name]} (pids ${pids[*]})"
}

srv_consul() {
	local name="$1" bin dir http pid
	bin=$(srv_bin consul scripts/install/consul.sh) || return 1
	http=$(srv_free_port)
	dir="$SRV_DIR/$name"
	mkdir -p "$dir"
	pid=$(srv_spawn "$dir/consul.log" "$bin" agent -dev -node "$name" -bind 127.0.0.1 -client 127.0.0.1 \
		-http-port "$http" -dns-port -1 -grpc-port -1 -grpc-tls-port -1 \
		-serf-lan-port "$(srv_free_port)" -serf-wan-port "$(srv_free_port)" -server-port "$(srv_free_port)" \
		-log-level warn -disable-host-node-id -hcl 'limits { http_max_conns_per_client = 4096 }')
	SRV_PIDS[$name]=$pid
	SRV_ORDER+=("$name")
	if ! srv_wait "consul $name" 60 bash -c "[[ \$(curl -fsS http://127.0.0.1:$http/v1/status/leader) == *'\"'[0-9]* ]]"; then
		tail -5 "$dir/consul.log" >&2 || true
		return 1
	fi
	SRV_ADDR[$name]="127.0.0.1:$http"
	srv_log "consul $name: a dev agent on ${SRV_ADDR[$name]} (pid $pid)"
}

srv_azurite() {
	local name="$1" bin dir port pid
	bin=$(srv_bin azurite-blob scripts/install/azurite.sh) || return 1
	port=$(srv_free_port)
	dir="$SRV_DIR/$name"
	mkdir -p "$dir"
	# In its own folder: in memory, it should write nothing, but any file
	# it writes lands in its working folder.
	pid=$(cd "$dir" && srv_spawn "$dir/azurite.log" "$bin" --blobHost 127.0.0.1 --blobPort "$port" \
		--inMemoryPersistence --skipApiVersionCheck --disableTelemetry --loose)
	SRV_PIDS[$name]=$pid
	SRV_ORDER+=("$name")
	if ! srv_wait "azurite $name" 60 curl -sS -o /dev/null "http://127.0.0.1:$port/devstoreaccount1?comp=list"; then
		tail -5 "$dir/azurite.log" >&2 || true
		return 1
	fi
	SRV_ADDR[$name]="http://127.0.0.1:$port/devstoreaccount1"
	srv_log "azurite $name at ${SRV_ADDR[$name]} (pid $pid)"
}

# The root credentials of the versitygw started here (a throwaway server on
# loopback: not a secret).
SRV_S3_KEY=leaseholdbench
SRV_S3_SECRET=leaseholdbenchsecret

srv_versitygw() {
	local name="$1" bucket="$2" bin dir port pid
	bin=$(srv_bin versitygw scripts/install/versitygw.sh) || return 1
	port=$(srv_free_port)
	dir="$SRV_DIR/$name"
	mkdir -p "$dir/data/$bucket"
	pid=$(srv_spawn "$dir/versitygw.log" env ROOT_ACCESS_KEY_ID=$SRV_S3_KEY ROOT_SECRET_ACCESS_KEY=$SRV_S3_SECRET \
		"$bin" --port "127.0.0.1:$port" --quiet --keep-alive --region us-east-1 posix "$dir/data")
	SRV_PIDS[$name]=$pid
	SRV_ORDER+=("$name")
	if ! srv_wait "versitygw $name" 60 curl -sS -o /dev/null "http://127.0.0.1:$port/"; then
		tail -5 "$dir/versitygw.log" >&2 || true
		return 1
	fi
	SRV_ADDR[$name]="http://127.0.0.1:$port"
	srv_log "versitygw $name at ${SRV_ADDR[$name]} (pid $pid)"
}

# srv_alive PID: whether the process runs (a zombie waiting for its parent,
# or for init, to reap it does not).
srv_alive() {
	local st
	kill -0 "$1" 2>/dev/null || return 1
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	st="${st##*) }"
	[[ "${st:0:1}" != Z ]]
}

# srv_stop_all: stops every server: all are signalled at once (SIGTERM;
# SIGINT, a fast shutdown, for PostgreSQL), and a server still running after
# its grace (5 s; 1 s for etcd, whose members wait for each other) has its
# session killed.
srv_stop_all() {
	local i name pid sig grace
	local -a pids=() deadlines=()
	local now
	for ((i = ${#SRV_ORDER[@]} - 1; i >= 0; i--)); do
		name="${SRV_ORDER[i]}"
		sig=TERM grace=50
		[[ -f "$SRV_DIR/$name/pg.log" ]] && sig=INT
		[[ -d "$SRV_DIR/$name/1" ]] && grace=10 # an etcd cluster
		for pid in ${SRV_PIDS[$name]:-}; do
			if [[ "$pid" == pg:* ]]; then
				# Started, but its pid was not read yet.
				[[ -f "${pid#pg:}/postmaster.pid" ]] || continue
				pid=$(head -1 "${pid#pg:}/postmaster.pid")
			fi
			if kill -"$sig" "$pid" 2>/dev/null; then
				pids+=("$pid")
				deadlines+=("$grace")
			fi
		done
		unset "SRV_PIDS[$name]"
	done
	SRV_ORDER=()
	# Poll every 0.1 s; kill what outlives its grace (in tenths).
	for ((now = 0; ${#pids[@]} > 0; now++)); do
		local -a left=() leftuntil=()
		for i in "${!pids[@]}"; do
			pid="${pids[i]}"
			srv_alive "$pid" || continue
			if ((now >= deadlines[i])); then
				kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
				continue
			fi
			left+=("$pid")
			leftuntil+=("${deadlines[i]}")
		done
		pids=("${left[@]}")
		deadlines=("${leftuntil[@]}")
		((${#pids[@]} > 0)) && sleep 0.1
	done
	return 0
}
