package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/sqlite"
)

// Open the embedded store (one SQLite file that the processes of one host
// share; no server) and run work under a lease. This is the program at the
// top of the README (storeurl's TestREADMEExamples keeps the two equal).
func Example() {
	ctx := context.Background()
	// One file, shared by the processes of this host; its folder must exist.
	store, err := sqlite.Open(ctx, filepath.Join(os.TempDir(), "leasehold-example.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	c, err := leasehold.New(store, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	err = c.Do(ctx, "reports/nightly", leasehold.AcquireOptions{TTL: 15 * time.Second, Wait: time.Minute},
		func(ctx context.Context, l *leasehold.Lease) error {
			// ctx is cancelled, with a cause, the moment the lease is lost.
			// l.Token() is the fencing token: send it with every protected write.
			fmt.Println("holding", l.Key())
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}
	// Output: holding reports/nightly
}
