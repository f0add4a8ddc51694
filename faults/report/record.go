package report

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/leasehold-go/leasehold/faults/check"
)

// Record is one line of a suite's results file: a run's result, or the
// error of a run that could not be made.
type Record struct {
	Store  string             `json:"store"`
	Result *check.RunResult   `json:"result,omitempty"`
	Stall  *check.StallResult `json:"stall,omitempty"` // a W7 run
	CLI    *check.CLIResult   `json:"cli,omitempty"`   // a run of the CLI workload
	Prim   *check.PrimResult  `json:"prim,omitempty"`  // a run of W8 or W9
	Error  string             `json:"error,omitempty"`
}

// ReadRecords reads the runs of a results file written by the suite, and
// the errors of runs that could not be made, per store.
func ReadRecords(path string) ([]*check.RunResult, map[string][]string, error) {
	recs, err := readRecordFile(path)
	if err != nil {
		return nil, nil, err
	}
	var rs []*check.RunResult
	errs := map[string][]string{}
	for _, r := range recs {
		switch {
		case r.Result != nil:
			rs = append(rs, r.Result)
		case r.Error != "":
			errs[r.Store] = append(errs[r.Store], r.Error)
		}
	}
	return rs, errs, nil
}

// readRecordFile reads every line of a results file.
func readRecordFile(path string) ([]Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Record
	for i, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// readKind reads the results of one kind from a results file: those that
// pick finds in its records.
func readKind[T any](path string, pick func(Record) *T) ([]*T, error) {
	recs, err := readRecordFile(path)
	if err != nil {
		return nil, err
	}
	var out []*T
	for _, r := range recs {
		if v := pick(r); v != nil {
			out = append(out, v)
		}
	}
	return out, nil
}
