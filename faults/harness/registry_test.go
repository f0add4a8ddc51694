package harness

import (
	"slices"
	"testing"

	"github.com/leasehold-go/leasehold/storeurl"
)

// TestBackendsFollowStoreTable checks the harness's backends against the
// store table: every fault backend a row names exists here, in the table's
// order, and nothing else does.
func TestBackendsFollowStoreTable(t *testing.T) {
	var want []string
	for _, k := range storeurl.Stores() {
		want = append(want, k.FaultBackends...)
	}
	if !slices.Equal(BackendNames, want) {
		t.Errorf("BackendNames = %v; the store table (storeurl.Stores) names %v", BackendNames, want)
	}
	for _, name := range want {
		b, err := NewBackend(name)
		if err != nil {
			t.Errorf("the store table names fault backend %q: %v", name, err)
			continue
		}
		if b.Name() != name {
			t.Errorf("NewBackend(%q).Name() = %q", name, b.Name())
		}
	}
}
