package prims_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold/faults/prims"
	"github.com/leasehold-go/leasehold/storeurl"
)

// holderEnv makes the test binary, re-executed by Run, a holder.
const holderEnv = "LEASEHOLD_FAULTS_TEST_PRIM_HOLDER"

func TestMain(m *testing.M) {
	if os.Getenv(holderEnv) == "1" && len(os.Args) > 1 && os.Args[1] == "prim-holder" {
		cfg, err := prims.ParseHolderArgs(os.Args[2:])
		if err == nil {
			err = prims.RunHolder(context.Background(), cfg, storeurl.Open)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
