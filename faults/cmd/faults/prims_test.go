package main

import (
	"slices"
	"testing"
)

// TestPrimStores checks which stores the suite gives W8 and W9: sqlite and
// redis in the short mode, every store in the long one, the ones named by
// -prim-stores (of those run) in either, none for "".
func TestPrimStores(t *testing.T) {
	tests := []struct {
		args  []string
		names []string
		secs  int
	}{
		{[]string{"-short", "-stores", "sqlite,etcd,redis"}, []string{"sqlite", "redis"}, 0},
		{[]string{"-long", "-stores", "sqlite,etcd"}, []string{"sqlite", "etcd"}, 60},
		{[]string{"-long", "-stores", "sqlite,etcd", "-prim-stores", "", "-prim-seconds", "5"}, nil, 5},
		{[]string{"-short", "-stores", "etcd", "-prim-stores", "etcd,redis"}, []string{"etcd"}, 0},
	}
	for _, tt := range tests {
		c, err := parseSuite(tt.args)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if !slices.Equal(c.primNames, tt.names) || c.primSecs != tt.secs {
			t.Errorf("%v: stores %v, %d s; want %v, %d s", tt.args, c.primNames, c.primSecs, tt.names, tt.secs)
		}
	}
}

// TestPrimsOnly checks -prims-only: off by default, on when given (the
// suite then runs W8 and W9 alone, for their rows on the safety page).
func TestPrimsOnly(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{
		{[]string{"-long", "-stores", "sqlite"}, false},
		{[]string{"-long", "-stores", "sqlite", "-prims-only"}, true},
	} {
		c, err := parseSuite(tt.args)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if c.primsOnly != tt.want {
			t.Errorf("%v: primsOnly %v, want %v", tt.args, c.primsOnly, tt.want)
		}
	}
}
