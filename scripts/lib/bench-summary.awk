# Renders the summary table of docs/bench.md. Input files, in order:
# bench-goals.tsv, bench-reasons.tsv, then the SUMMARY lines the benchmarks
# printed ("SUMMARY <id> <value> [<min> <max>]": a figure measured in
# rounds, the median, brings the smallest and largest of the rounds; the
# last line of an id counts).
BEGIN { FS = "\t" }
FILENAME == ARGV[1] && !/^#/ && NF >= 5 {
	n++; id[n] = $1; what[$1] = $2; goal[$1] = $3; unit[$1] = $4; src[$1] = $5
	next
}
FILENAME == ARGV[2] && !/^#/ && NF >= 2 { reason[$1] = $2; next }
FILENAME != ARGV[1] && FILENAME != ARGV[2] {
	split($0, f, " ")
	if (f[1] == "SUMMARY" && f[3] != "") {
		val[f[2]] = f[3] + 0
		delete lo[f[2]]; delete hi[f[2]]
		if (f[5] != "") { lo[f[2]] = f[4] + 0; hi[f[2]] = f[5] + 0 }
	}
}
function show(v, u) {
	if (u == "x") return sprintf("%.2fx", v)
	if (u == "B") return sprintf("%.0f B", v)
	if (u == "MiB") return sprintf("%.1f MiB", v)
	if (u == "ms") return sprintf("%.1f ms", v)
	if (u == "us") return sprintf("%.1f µs", v)
	return (v == int(v)) ? sprintf("%d", v) : sprintf("%.2f", v)
}
END {
	# Derived: the Client's cycle over the store's own, from the two floors.
	if (("redis-client-over-floor-1" in val) && ("redis-store-over-floor-1" in val) && val["redis-store-over-floor-1"] > 0)
		val["redis-client-over-store-1"] = val["redis-client-over-floor-1"] / val["redis-store-over-floor-1"]
	print "| what | measured | spread over the rounds | goal | met | from |"
	print "| --- | ---: | ---: | ---: | --- | --- |"
	for (i = 1; i <= n; i++) {
		k = id[i]
		g = goal[k]
		split(g, gp, " ")
		gs = (g == "-") ? "-" : gp[1] " " show(gp[2] + 0, unit[k])
		if (!(k in val)) {
			printf "| %s | not measured | - | %s | **no figure** (see *Not measured*) | %s |\n", what[k], gs, src[k]
			continue
		}
		v = val[k]
		spread = (k in lo) ? show(lo[k], unit[k]) " to " show(hi[k], unit[k]) : "-"
		met = "-"
		if (g != "-") {
			ok = (gp[1] == ">=") ? (v >= gp[2] + 0) : (v <= gp[2] + 0)
			met = ok ? "yes" : "**no**"
			# A goal that some rounds met: the miss may be noise.
			if (!ok && (k in lo) && lo[k] <= gp[2] + 0 && gp[2] + 0 <= hi[k]) met = met " (within the spread)"
			if (!ok && (k in reason)) met = met ": " reason[k]
		}
		printf "| %s | %s | %s | %s | %s | %s |\n", what[k], show(v, unit[k]), spread, gs, met, src[k]
	}
}
