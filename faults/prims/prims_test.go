package prims_test

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/prims"
	"github.com/leasehold-go/leasehold/storeurl"
)

func TestHolderArgsRoundTrip(t *testing.T) {
	c := prims.HolderConfig{ID: "p1.2", URL: "sqlite:///tmp/x.db", Resource: "http://127.0.0.1:1", Role: check.ModeWrite, Key: "rw",
		Slots: 3, Broken: true, TTL: 750 * time.Millisecond, Work: 150 * time.Millisecond, History: "/tmp/h.jsonl", Seed: 9}
	got, err := prims.ParseHolderArgs(c.Args())
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("ParseHolderArgs(Args()) = %+v, %v; want %+v", got, err, c)
	}
	bad := c
	bad.Role = "reader"
	if _, err := prims.ParseHolderArgs(bad.Args()); err == nil || !strings.Contains(err.Error(), "reader") {
		t.Errorf("role %q: %v, want an error naming it", bad.Role, err)
	}
}

// TestRunSQLite runs W8 (one pass of its faults) and W9's mutation on the
// embedded store, with holders that are this test binary: W8 passes with
// its pause biting (a stale write refused), and the broken lock's writers
// are caught overlapping readers.
func TestRunSQLite(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(holderEnv, "1")
	for _, tc := range []struct {
		workload string
		mutation bool
	}{{prims.W8, false}, {prims.W9, true}} {
		r, err := prims.Run(context.Background(), prims.Config{
			Backend: &harness.SQLite{}, Open: storeurl.Open, HolderCmd: []string{exe, "prim-holder"},
			Workload: tc.workload, Mutation: tc.mutation, Dir: t.TempDir(), Seed: 1,
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.workload, err)
		}
		if len(r.Missed) > 0 || len(r.Invalid) > 0 || r.Caught != tc.mutation {
			t.Errorf("%s mutation=%v: missed %v, invalid %v, caught %v", tc.workload, tc.mutation, r.Missed, r.Invalid, r.Caught)
		}
		if !tc.mutation && (r.StaleRefused == 0 || r.Episodes[check.F2] == 0 || r.Episodes[check.F3] == 0) {
			t.Errorf("%s: episodes %v, stale refused %d: the faults did not run or bite", tc.workload, r.Episodes, r.StaleRefused)
		}
	}
}
