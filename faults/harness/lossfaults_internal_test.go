package harness

import (
	"slices"
	"testing"

	"github.com/leasehold-go/leasehold/faults/check"
)

// TestLossFaults: the stores whose design lets them end a grant early
// declare the fault classes it happens under, each a row of the fault
// table; every other store declares none.
func TestLossFaults(t *testing.T) {
	cases := []struct {
		b    Backend
		want []string
	}{
		{&Redis{}, []string{check.F9b, check.F11}},
		{&Redlock{}, []string{check.F9, check.F9m}},
		{&SQLite{}, []string{check.F17}},
		{&Postgres{Mode: "advisory"}, []string{check.F4, check.F5, check.F6, check.F7, check.F9}},
		{&Postgres{Mode: "lease"}, nil},
		{&Etcd{}, nil},
		{&Consul{}, nil},
		{&ZooKeeper{}, nil},
		{NewRemote("remote-sqlite", &SQLite{}, false), nil},
		{NewRemote("remote-postgres-advisory", &Postgres{Mode: "advisory"}, true), []string{check.F9}},
	}
	for _, c := range cases {
		got := lossFaults(c.b)
		if !slices.Equal(got, c.want) {
			t.Errorf("%T %s: loss faults %v, want %v", c.b, c.b.Name(), got, c.want)
		}
		for _, f := range got {
			if _, err := faultByID(f); err != nil || check.Describe(f) == "" {
				t.Errorf("%s: declared fault %s is not in the fault table", c.b.Name(), f)
			}
		}
	}
}
