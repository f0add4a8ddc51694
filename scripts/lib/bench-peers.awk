# Reads `go test -bench` output of a store helper's module (redis/bench,
# postgres/bench, etcd/bench) and keeps the raw floors and peer libraries:
# a JSON reference line per implementation and scenario on stdout (for the
# chart), and a Markdown row appended to the file named by -v table. With
# -v dir naming the module's folder. A benchmark run in rounds (a part named
# roundN) gives one row: the median of the rounds' rates, with the latency
# of the median round.
#
# BenchmarkName/part/part-P  N  x ns/op  y cycles/s  z p50-µs ...: one
# implementation per line (named by a part of the name), or several (named
# by the metrics' prefixes: floor-upsert-cycles/s, ...).
/^Benchmark/ && /cycles\/s/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	n = split(name, part, "/")
	scen = ""; base = ""
	for (i = 2; i <= n; i++) {
		if (scen == "" && part[i] ~ /^(g|distinct-|hot-?)[0-9]+$/) scen = part[i]
		else if (part[i] !~ /^round[0-9]+$/) base = base (base == "" ? "" : "/") part[i]
	}
	k = 0; delete cps; delete p50; delete p99; delete order
	for (i = 3; i < NF; i += 2) {
		u = $(i+1); v = $i; im = u
		if (u ~ /(^|-)cycles\/s$/) {
			sub(/-?cycles\/s$/, "", im)
			if (!(im in cps)) order[++k] = im
			cps[im] = v
		} else if (u ~ /(^|-)p50-(ms|µs)$/) {
			sub(/-?p50-(ms|µs)$/, "", im); p50[im] = (u ~ /µs$/) ? v / 1000 : v
		} else if (u ~ /(^|-)p99-(ms|µs)$/) {
			sub(/-?p99-(ms|µs)$/, "", im); p99[im] = (u ~ /µs$/) ? v / 1000 : v
		}
	}
	for (j = 1; j <= k; j++) {
		im = order[j]
		impl = (im == "") ? base : (base == "" ? im : base "/" im)
		# leasehold itself is measured through its client, in the main tables.
		if (impl ~ /^(leasehold|lh-)/ || impl == "lease" || impl == "advisory") continue
		id = impl SUBSEP scen
		if (!(id in seen)) { seen[id] = 1; ids[++m] = id; implOf[id] = impl; scenOf[id] = scen; src[id] = $1 }
		r = ++rounds[id]
		rate[id, r] = cps[im]; lat50[id, r] = p50[im]; lat99[id, r] = p99[im]
	}
}
END {
	store = dir; sub(/\/bench$/, "", store)
	for (x = 1; x <= m; x++) {
		id = ids[x]; impl = implOf[id]; scen = scenOf[id]; r = rounds[id]
		# the median round by rate (insertion sort of the round numbers)
		for (a = 1; a <= r; a++) idx[a] = a
		for (a = 2; a <= r; a++) for (b = a; b > 1 && rate[id, idx[b]] < rate[id, idx[b-1]]; b--) { t = idx[b]; idx[b] = idx[b-1]; idx[b-1] = t }
		med = idx[int((r + 1) / 2)]
		c = 1
		if (match(scen, /[0-9]+/)) c = substr(scen, RSTART, RLENGTH) + 0
		kind = (impl ~ /raw|floor/) ? "floor" : "peer"
		label = store ": " impl
		if (scen ~ /^hot/) label = label " (hot key)"
		printf "{\"kind\":\"reference\",\"store\":\"%s\",\"ref\":\"%s\",\"clients\":%d,\"cycles_per_sec\":%.1f,\"source\":\"%s %s\"}\n", label, kind, c, rate[id, med], dir, src[id]
		printf "| %s | %s | %s | %s | %d | %.0f | %s | %s |\n", store, impl, kind, (scen ~ /^hot/ ? "hot key" : "distinct keys"), c, rate[id, med], (lat50[id, med] ? sprintf("%.2f", lat50[id, med]) : "-"), (lat99[id, med] ? sprintf("%.2f", lat99[id, med]) : "-") >> table
	}
}
