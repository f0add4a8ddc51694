package postgres_test

import (
	"fmt"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/postgres"
)

// capabilities lists the root package's optional capabilities that s
// implements.
func capabilities(s any) map[string]bool {
	has := map[string]bool{}
	if _, ok := s.(leasehold.Notifier); ok {
		has["Notifier"] = true
	}
	if _, ok := s.(leasehold.Waiter); ok {
		has["Waiter"] = true
	}
	if _, ok := s.(leasehold.BatchRenewer); ok {
		has["BatchRenewer"] = true
	}
	if _, ok := s.(leasehold.Lister); ok {
		has["Lister"] = true
	}
	return has
}

// TestCapabilities checks that each store claims exactly the optional
// capabilities it has: a claim it cannot honour (the advisory store cannot
// list) fails here, not at run time. It also checks that New returns the
// type of its mode.
func TestCapabilities(t *testing.T) {
	for _, c := range []struct {
		mode  postgres.Mode
		typed postgres.Store
		want  []string
	}{
		{postgres.LeaseRow, (*postgres.LeaseStore)(nil), []string{"Notifier", "BatchRenewer", "Lister"}},
		{postgres.Advisory, (*postgres.AdvisoryStore)(nil), []string{"Notifier", "BatchRenewer"}},
	} {
		t.Run(c.mode.String(), func(t *testing.T) {
			s, err := postgres.New(newPool(t), postgres.Options{Mode: c.mode})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got, want := fmt.Sprintf("%T", s), fmt.Sprintf("%T", c.typed); got != want {
				t.Fatalf("New with mode %v returned a %s, want a %s", c.mode, got, want)
			}
			if s.Mode() != c.mode {
				t.Errorf("Mode() = %v, want %v", s.Mode(), c.mode)
			}
			want := map[string]bool{}
			for _, w := range c.want {
				want[w] = true
			}
			for _, name := range []string{"Notifier", "Waiter", "BatchRenewer", "Lister"} {
				if got := capabilities(s)[name]; got != want[name] {
					t.Errorf("%T implements leasehold.%s: %v, want %v", s, name, got, want[name])
				}
			}
		})
	}
}
