package harness_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/netlab"
	"github.com/leasehold-go/leasehold/storeurl"
)

// holderEnv makes the test binary, re-executed by the harness, a holder.
const holderEnv = "LEASEHOLD_FAULTS_TEST_HOLDER"

func TestMain(m *testing.M) {
	if os.Getenv(holderEnv) == "1" && len(os.Args) > 1 && os.Args[1] == "holder" {
		cfg, err := harness.ParseHolderArgs(os.Args[2:])
		if err == nil {
			err = harness.RunHolder(context.Background(), cfg, storeurl.Open)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(holderEnv) == "1" && len(os.Args) > 1 && os.Args[1] == "cli-child" {
		cfg, err := harness.ParseCLIChildArgs(os.Args[2:])
		if err == nil {
			err = harness.RunCLIChild(cfg)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The tests' servers, holders and proxies run in a private network
	// namespace, where the member partitions build their lab.
	if err := netlab.Enter(); err != nil && !errors.Is(err, netlab.ErrOff) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m)
}
