package main

import (
	"flag"
	"io"
	"testing"
	"time"
)

// TestWorkloadFlags checks that the workload flags take the mode's
// defaults for what is not given and refuse what cannot run.
func TestWorkloadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		def  workload
		want workload
		bad  bool
	}{
		{def: shortWorkload(), want: workload{holders: 3, keys: 2, opsMin: 2, opsMax: 6}},
		{def: longWorkload(), want: workload{holders: 3, keys: 8, work: 100 * time.Millisecond, opsMin: 4, opsMax: 12}},
		{args: []string{"-keys", "16", "-holders", "4", "-ops", "1-3", "-work", "50ms", "-gap", "10ms"}, def: longWorkload(),
			want: workload{holders: 4, keys: 16, work: 50 * time.Millisecond, gap: 10 * time.Millisecond, opsMin: 1, opsMax: 3}},
		{args: []string{"-ops", "6-2"}, def: shortWorkload(), bad: true},
		{args: []string{"-ops", "x"}, def: shortWorkload(), bad: true},
		{args: []string{"-keys", "-1"}, def: shortWorkload(), bad: true},
		{args: []string{"-work", "-1s"}, def: shortWorkload(), bad: true},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		read := workloadFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		got, err := read(tc.def)
		if tc.bad {
			if err == nil {
				t.Errorf("%v: accepted as %+v", tc.args, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
}

// TestSuiteModes checks that the short mode keeps CI's workload and the
// long mode gets the denser one.
func TestSuiteModes(t *testing.T) {
	s, err := parseSuite([]string{"-short", "-stores", "sqlite"})
	if err != nil || s.wl != shortWorkload() || s.nRuns != 1 {
		t.Errorf("short: %+v, %v", s, err)
	}
	l, err := parseSuite([]string{"-long", "-stores", "sqlite", "-keys", "4"})
	if err != nil || l.wl.keys != 4 || l.wl.opsMin != 4 || l.mode != "long" {
		t.Errorf("long: %+v, %v", l, err)
	}
}
