//go:build race

package main

// raceEnabled: the tests run under -race, so the worker binary is built
// with it too (a data race in a worker makes it exit 66, which fails the run).
const raceEnabled = true
