package harness_test

import (
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/harness"
)

// TestStaticFault: what the harness tells of a fault class on a store it
// has not started: F9k applies to kube alone, F10 to the stores with a
// leader, F5 acts on kube in part; the classes that depend on the running
// store (F4: its network) say nothing.
func TestStaticFault(t *testing.T) {
	for _, tc := range []struct {
		store, id    string
		notRun, note string // substrings; "" for empty
	}{
		{"redis", check.F9k, "only the kube store's apiserver", ""},
		{"zookeeper", check.F9k, "only the kube store's apiserver", ""},
		{"kube", check.F9k, "", ""},
		{"sqlite", check.F10, "no leader to kill", ""},
		{"etcd", check.F10, "", ""},
		{"kube", check.F5, "", "TLS handshake"},
		{"redis", check.F5, "", ""},
		{"redis", check.F4, "", ""},
	} {
		notRun, note, err := harness.StaticFault(tc.store, tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if (tc.notRun == "") != (notRun == "") || !strings.Contains(notRun, tc.notRun) || (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
			t.Errorf("%s %s: not run %q, note %q; want %q, %q", tc.store, tc.id, notRun, note, tc.notRun, tc.note)
		}
	}
	if _, _, err := harness.StaticFault("nosuch", check.F9k); err == nil {
		t.Error("an unknown store: no error")
	}
}
