//go:build !race

package main

// raceEnabled: the tests run without -race; so is the worker binary built.
const raceEnabled = false
