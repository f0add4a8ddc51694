# Renders serve/bench's `go test -bench` output (scripts/bench-page's
# server section) as three Markdown tables: the cycles direct and through
# the server side by side (BenchmarkCycle/gN/STORE/PATH/roundR: the median
# round by rate, with its latencies), followed by the HTTP floor
# (BenchmarkHTTPFloor); the server's memory with leases held
# (BenchmarkHeld/STORE) and the watch fan-out (BenchmarkFanout).
function metrics(   i) {
	delete m
	for (i = 3; i < NF; i += 2) m[$(i+1)] = $i
}
function ms(us) { return sprintf("%.2f", us / 1000) }
/^BenchmarkCycle\// {
	metrics()
	name = $1; sub(/-[0-9]+$/, "", name)
	split(name, part, "/")
	g = substr(part[2], 2) + 0; store = part[3]; path = part[4]
	id = store SUBSEP g
	if (!(id in seen)) { seen[id] = 1; ids[++n] = id; storeOf[id] = store; gOf[id] = g }
	r = ++rounds[id, path]
	rate[id, path, r] = m["cycles/s"]; p50[id, path, r] = m["p50-µs"]; p99[id, path, r] = m["p99-µs"]; cpu[id, path, r] = m["cpu-µs/cycle"]
	next
}
/^BenchmarkHTTPFloor/ {
	metrics()
	floor = sprintf("A bare HTTP/1.1 request and answer on a kept-alive loopback connection (`BenchmarkHTTPFloor`, net/http on both sides, no store): %.0f µs, %.0f µs of CPU; a cycle through the server makes two.", m["µs/req"], m["cpu-µs/req"])
	next
}
/^BenchmarkHeld\// {
	metrics()
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkHeld\//, "", name)
	held[++nh] = sprintf("| %s | %d | %.1f MiB | %.1f MiB | %.1f MiB | %.1f MiB | %.0f B | %.0f |", name, m["leases"], m["rss-MiB"], m["anon-MiB"], m["peak-MiB"], m["idle-MiB"], m["B/lease"], m["acquires/s"])
	next
}
/^BenchmarkFanout/ {
	metrics()
	fan[++nf] = sprintf("| %d | %d | %.1f ms | %.1f ms | %.1f ms |", m["subscribers"], $2, m["p50-ms"], m["p99-ms"], m["max-ms"])
	next
}
# med(id, path): the median round of id on path, by rate.
function med(id, path,   k, a, b, t, idx) {
	k = rounds[id, path]
	for (a = 1; a <= k; a++) idx[a] = a
	for (a = 2; a <= k; a++) for (b = a; b > 1 && rate[id, path, idx[b]] < rate[id, path, idx[b-1]]; b--) { t = idx[b]; idx[b] = idx[b-1]; idx[b-1] = t }
	return idx[int(k / 2) + 1] # the upper median of an even count, as serve/bench's ratios
}
END {
	if (n > 0) {
		print "| store | goroutines | direct cycles/s | through the server cycles/s | server over direct | direct p50 / p99 ms | through the server p50 / p99 ms | CPU µs per cycle, direct / through the server |"
		print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
		for (x = 1; x <= n; x++) {
			id = ids[x]
			if (!rounds[id, "direct"] || !rounds[id, "served"]) continue
			d = med(id, "direct"); s = med(id, "served")
			dr = rate[id, "direct", d]; sr = rate[id, "served", s]
			printf "| %s | %d | %.0f | %.0f | %.2fx | %s / %s | %s / %s | %.0f / %.0f |\n", storeOf[id], gOf[id], dr, sr, (sr > 0 ? dr / sr : 0), ms(p50[id, "direct", d]), ms(p99[id, "direct", d]), ms(p50[id, "served", s]), ms(p99[id, "served", s]), cpu[id, "direct", d], cpu[id, "served", s]
		}
		print ""
		if (floor != "") { print floor; print "" }
	}
	if (nh > 0) {
		print "| store served | leases held | resident (VmRSS) | of it anonymous (RssAnon) | peak (VmHWM) | idle, before the leases | growth per lease | acquires/s (32 at a time) |"
		print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
		for (x = 1; x <= nh; x++) print held[x]
		print ""
	}
	if (nf > 0) {
		print "| subscribers | releases | p50 | p99 | max |"
		print "| ---: | ---: | ---: | ---: | ---: |"
		for (x = 1; x <= nf; x++) print fan[x]
	}
}
