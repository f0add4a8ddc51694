package harness

import (
	"context"
	"regexp"
	"testing"
)

// TestBuildCommit: a test binary has no VCS stamp, so the commit comes
// from the checkout it runs in (the harness's own repository).
func TestBuildCommit(t *testing.T) {
	if got := buildCommit(context.Background()); !regexp.MustCompile(`^[0-9a-f]{7}(\+dirty)?$`).MatchString(got) {
		t.Errorf("buildCommit() = %q, want a short commit", got)
	}
}
