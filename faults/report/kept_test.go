package report_test

import (
	"testing"

	"github.com/leasehold-go/leasehold/faults/report"
)

func TestKeepTail(t *testing.T) {
	const md = "# Safety under faults\n\nnew tables\n"
	tests := []struct {
		name, old, want string
	}{
		{"no previous page", "", md},
		{"previous page without the section", "# Safety under faults\n\nold tables\n", md},
		{"section kept", "# Safety under faults\n\nold tables\n\n## Fuzzing\n\nfuzz table\n",
			"# Safety under faults\n\nnew tables\n\n## Fuzzing\n\nfuzz table\n"},
		{"section at the start", "## Fuzzing\nonly\n", "# Safety under faults\n\nnew tables\n\n## Fuzzing\nonly\n"},
		{"a longer heading is not it", "old\n## Fuzzing targets\nx\n", md},
		{"not a heading mid-line", "old ## Fuzzing\nx\n", md},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := report.KeepTail(md, tt.old); got != tt.want {
				t.Errorf("KeepTail(md, %q) =\n%q\nwant\n%q", tt.old, got, tt.want)
			}
		})
	}
}
