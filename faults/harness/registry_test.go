package harness

import (
	"slices"
	"testing"

	"github.com/leasehold-go/leasehold/storeurl"
)

// TestBackendsFollowStoreTable checks the harness's backends against the
// store table: NewBackend makes every fault backend a row names, under that
// name, and the suite's default list is the table's less the rows run only
// when named.
func TestBackendsFollowStoreTable(t *testing.T) {
	var all, suite []string
	for _, k := range storeurl.Stores() {
		all = append(all, k.FaultBackends...)
		if k.FaultsOnlyNamed == "" {
			suite = append(suite, k.FaultBackends...)
		}
		for _, name := range k.FaultBackends {
			b, err := NewBackend(name)
			if err != nil {
				t.Errorf("the store table names fault backend %q (store %s): %v", name, k.Name, err)
				continue
			}
			if b.Name() != name {
				t.Errorf("NewBackend(%q).Name() = %q", name, b.Name())
			}
			if servers, err := BackendServers(name); err != nil || !slices.Equal(servers, k.Servers) {
				t.Errorf("BackendServers(%q) = %v, %v; want %v", name, servers, err, k.Servers)
			}
		}
	}
	if got := BackendNames(); !slices.Equal(got, all) {
		t.Errorf("BackendNames() = %v; want %v", got, all)
	}
	if got := SuiteNames(); !slices.Equal(got, suite) || slices.Contains(got, "azblob") {
		t.Errorf("SuiteNames() = %v; want %v, without azblob", got, suite)
	}
	if _, err := NewBackend("nosuch"); err == nil {
		t.Error(`NewBackend("nosuch") = nil error`)
	}
	if _, err := BackendServers("nosuch"); err == nil {
		t.Error(`BackendServers("nosuch") = nil error`)
	}
}
