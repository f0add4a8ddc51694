package main

import (
	"slices"
	"strings"
	"testing"
)

// TestStoresCmd checks the lists scripts read from `faults stores`.
func TestStoresCmd(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		code     int
		has, not []string
	}{
		{args: nil, has: []string{"sqlite", "postgres-lease", "zookeeper", "s3"}, not: []string{"azblob"}},
		{args: []string{"-all"}, has: []string{"sqlite", "azblob"}},
		{args: []string{"-servers"}, has: []string{"redis", "postgres", "versitygw"}, not: []string{"azurite", "sqlite"}},
		{args: []string{"-stores", "azblob,redlock", "-servers"}, has: []string{"azurite", "redis"}, not: []string{"postgres"}},
		{args: []string{"-stores", "nosuch"}, code: 2},
		{args: []string{"extra"}, code: 2},
		{args: []string{"-bogus"}, code: 2},
	} {
		var b strings.Builder
		code, err := storesCmd(&b, tc.args)
		if code != tc.code || (code == 0) != (err == nil) {
			t.Errorf("stores %v: code %d, %v; want %d", tc.args, code, err, tc.code)
		}
		lines := strings.Fields(b.String())
		for _, s := range tc.has {
			if !slices.Contains(lines, s) {
				t.Errorf("stores %v = %v; want %s in it", tc.args, lines, s)
			}
		}
		for _, s := range tc.not {
			if slices.Contains(lines, s) {
				t.Errorf("stores %v = %v; want no %s", tc.args, lines, s)
			}
		}
	}
}
