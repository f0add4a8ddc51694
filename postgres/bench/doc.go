// Package bench holds the postgres store's benchmarks, in a module of their
// own so that the store does not depend on what it is compared with
// (cirello.io/pglock). Run them all in one go against one throwaway server:
//
//	cd postgres/bench && GOWORK=off go test -run '^$' -bench . -benchtime 20x
//
// The acquire+release contenders take turns in short slices (the machines
// are shared and noisy), and TestMain prints a table with the ratios to the
// raw floors and to pglock after the benchmarks, then the bench page's
// summary lines ("SUMMARY <id> <value>": pg-lease-over-floor-1,
// pg-advisory-over-floor-1, pg-lease-vs-pglock-64) when
// BenchmarkAcquireRelease ran more than one round, e.g.
//
//	GOWORK=off go test -run '^$' -bench AcquireRelease -benchtime 10x
//
// Throughput on a shared 2-core machine is noisy (the 64-goroutine ratio to
// pglock spread from 0.90x to 1.68x over four runs of the same binary), so
// BenchmarkCPUPerCycle measures what a shared machine disturbs less: each
// contender's client CPU, server CPU and allocations per cycle. At 64
// goroutines both cores are busy and throughput follows the sum of the two.
// BenchmarkAdvisoryParts and BenchmarkLeaseParts64 take the stores'
// statements apart (one part removed or added at a time), BenchmarkSerial
// runs one contender per op for -cpuprofile and -benchmem:
//
//	GOWORK=off go test -run '^$' -bench 'CPUPerCycle|AdvisoryParts|LeaseParts64' -benchtime 3x
package bench
