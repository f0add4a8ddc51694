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
package bench
