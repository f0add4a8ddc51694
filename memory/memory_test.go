package memory_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/leasetest"
	"github.com/leasehold-go/leasehold/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	shared := memory.New(nil)
	leasetest.Run(t, leasetest.Config{
		Open: func(testing.TB) leasehold.Store { return shared.Reopen() },
	})
}
